package vmnode

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// CleanUp removes each machine's disks and leaves its console log.
func TestCleanUpRemovesTheDisksAndKeepsTheConsole(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, node := range []string{"vm-1", "vm-2"} {
		for _, f := range []string{"root.qcow2", "config.img", "console.log"} {
			path := filepath.Join(dir, "nodes", node, f)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
		}
	}
	removed := CleanUp(dir)
	for _, f := range files {
		_, err := os.Stat(f)
		isDisk := filepath.Base(f) != "console.log"
		if isDisk && (err == nil || !slices.Contains(removed, f)) {
			t.Errorf("%s: still there (%v) or not reported (%v)", f, err, removed)
		}
		if !isDisk && err != nil {
			t.Errorf("the console %s went: %v", f, err)
		}
	}
	if len(removed) != 4 {
		t.Errorf("removed %v, want the 4 disks", removed)
	}
}
