package nodeimages

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// containerRoot is the image's filesystem with the /dev/null that a
// container runtime adds (busybox's sh opens it for a background job).
func containerRoot(t *testing.T, img v1.Image) string {
	t.Helper()
	root := extract(t, img)
	if err := os.Mkdir(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, 1<<8|3 /* major 1, minor 3 */); err != nil {
		t.Fatal(err)
	}
	return root
}
