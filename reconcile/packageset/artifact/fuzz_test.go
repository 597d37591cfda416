package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// hostile are tar streams of the hostile cases the unit tests cover one by
// one: seeds from which the fuzzer mutates headers and names.
func hostile(t testing.TB) [][]byte {
	return [][]byte{
		tarStream(t, entry{name: "fleet", typ: tar.TypeDir}, entry{name: "fleet/gpu.yaml", body: "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\n"}),
		tarStream(t, entry{name: "../escape.yaml", body: "x"}),
		tarStream(t, entry{name: "/abs.yaml", body: "x"}),
		tarStream(t, entry{name: "..", typ: tar.TypeDir}),
		tarStream(t, entry{name: "link", typ: tar.TypeSymlink, link: "/etc"}, entry{name: "link/passwd", body: "x"}),
		tarStream(t, entry{name: "hard", typ: tar.TypeLink, link: "../../etc/passwd"}),
		tarStream(t, entry{name: "big", size: 1 << 40}),
		tarStream(t, entry{name: "\xff\xfe.yaml", body: "x"}),
		tarStream(t, entry{name: "pax", pax: map[string]string{"comment": strings.Repeat("x", 600), "path": "../pax-escape"}}),
		tarStream(t, entry{name: "fifo", typ: tar.TypeFifo}),
	}
}

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = Limits{Bytes: 64 << 10, Entries: 20, Stream: 256 << 10}

// checkExtract extracts data and checks what must hold whatever it is:
// no panic, nothing beside the directory, no link, the bytes bounded; an
// error over a limit names it.
func checkExtract(t *testing.T, data []byte) {
	_, err := extract(t, data, fuzzLimits)
	if errors.Is(err, ErrLimit) && !strings.Contains(err.Error(), "bytes") && !strings.Contains(err.Error(), "files and directories") {
		t.Fatalf("a limit error that names no limit: %v", err)
	}
}

// FuzzExtract feeds arbitrary bytes, as a download would be, to Extract.
func FuzzExtract(f *testing.F) {
	for _, s := range hostile(f) {
		f.Add(gz(f, s))
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(checkExtract)
}

// FuzzExtractTar feeds arbitrary tar streams, gzip-compressed by the test,
// so that the fuzzer works on the tar headers rather than on deflate.
func FuzzExtractTar(f *testing.F) {
	for _, s := range hostile(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression) // stored: fast, and Extract reads it all the same
		_, _ = zw.Write(stream)
		_ = zw.Close()
		checkExtract(t, buf.Bytes())
	})
}
