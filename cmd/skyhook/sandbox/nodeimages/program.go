package nodeimages

import (
	"fmt"
	"os"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Program is an image that runs one static program of this machine (a
// path, such as a Prometheus the binaries cache built), as /bin/<name>,
// its entrypoint, beside busybox's applets for a look inside with kubectl
// exec. The program is a layer of its own, so images of one busybox share
// the other.
func Program(busybox, program, name string) (v1.Image, error) {
	if name == "" || path.Base(name) != name {
		return nil, fmt.Errorf("program name %q: want a file name, no directory", name)
	}
	bb, err := busyboxLayer(busybox)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(program)
	if err != nil {
		return nil, fmt.Errorf("the program of the image: %w", err)
	}
	prog, err := layer([]entry{{path: "bin/" + name, mode: 0o755, data: data}})
	if err != nil {
		return nil, err
	}
	return image([]string{"/bin/" + name}, bb, prog)
}
