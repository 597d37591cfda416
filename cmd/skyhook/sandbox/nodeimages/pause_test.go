package nodeimages

import "testing"

// The same busybox gives the same pause image, whose only files are
// busybox and its links.
func TestPauseIsDeterministic(t *testing.T) {
	bb := testBusybox(t)
	a, err := Pause(bb)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Pause(bb)
	if err != nil {
		t.Fatal(err)
	}
	if da, db := digest(t, a), digest(t, b); da != db {
		t.Errorf("digests %s and %s from the same busybox", da, db)
	}
	headers, _ := files(t, a)
	for name, hdr := range headers {
		if name != "bin" && name != "bin/busybox" && hdr.Linkname != "busybox" {
			t.Errorf("unexpected file %s in the pause image", name)
		}
		if !hdr.ModTime.Equal(epoch) || hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s: modified %v, owner %d:%d; want %v, 0:0", name, hdr.ModTime, hdr.Uid, hdr.Gid, epoch)
		}
	}
	for _, tool := range []string{"sh", "sleep"} {
		if headers["bin/"+tool] == nil {
			t.Errorf("no bin/%s in the pause image", tool)
		}
	}
}
