package nodeimages

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A program image holds the program at /bin/<name>, executable, as its
// entrypoint, beside busybox; a name with a directory is refused.
func TestProgramImage(t *testing.T) {
	bb := testBusybox(t)
	program := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(program, []byte("#!/bin/sh\necho tool\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Program(bb, program, "tool")
	if err != nil {
		t.Fatal(err)
	}
	headers, contents := files(t, img)
	if hdr := headers["bin/tool"]; hdr == nil || hdr.Mode&0o111 == 0 || !bytes.Equal(contents["bin/tool"], []byte("#!/bin/sh\necho tool\n")) {
		t.Errorf("bin/tool in the image: %+v, %q", hdr, contents["bin/tool"])
	}
	if headers["bin/busybox"] == nil {
		t.Error("no busybox in the image")
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != "/bin/tool" {
		t.Errorf("entrypoint %v, want [/bin/tool]", got)
	}
	if _, err := Program(bb, program, "usr/bin/tool"); err == nil {
		t.Error("a name with a directory was taken")
	}
}
