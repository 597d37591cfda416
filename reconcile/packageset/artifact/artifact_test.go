package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// entry is one tar entry of a test archive.
type entry struct {
	name, body string
	typ        byte   // tar.TypeReg when zero
	link       string // of a symlink or hard link
	size       int64  // declared when set, else len(body); a larger one is left unwritten
	pax        map[string]string
}

// tarball is the gzip-compressed tar of the entries.
func tarball(t testing.TB, entries ...entry) []byte {
	t.Helper()
	return gz(t, tarStream(t, entries...))
}

// tarStream is the tar of the entries, uncompressed. An entry declaring
// more than its body ends the stream there (the header alone is written).
func tarStream(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, Size: int64(len(e.body)), PAXRecords: e.pax, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if h.Typeflag != tar.TypeReg {
			h.Size, e.body = 0, ""
		}
		if e.size != 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > int64(len(e.body)) {
			return buf.Bytes() // the header is out; the rest never comes
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// extract runs Extract into a directory "out" of a fresh parent, and
// checks what any archive must leave: nothing beside out, no link in it,
// no more entries nor bytes than the limits allow.
func extract(t testing.TB, archive []byte, limits Limits) (string, error) {
	t.Helper()
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	err := Extract(bytes.NewReader(archive), out, limits)
	requireContained(t, parent, limits)
	return out, err
}

func requireContained(t testing.TB, parent string, limits Limits) {
	t.Helper()
	children, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		if c.Name() != "out" {
			t.Fatalf("extraction wrote %q beside its directory", c.Name())
		}
	}
	var size int64
	_ = filepath.WalkDir(filepath.Join(parent, "out"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			t.Fatalf("extraction made a symlink: %s", path)
		}
		if info.Mode().IsRegular() {
			size += info.Size()
		}
		return nil
	})
	if size > limits.Bytes {
		t.Fatalf("extraction wrote %d bytes; the limit is %d", size, limits.Bytes)
	}
}

var small = Limits{Bytes: 1 << 20, Entries: 100, Stream: 2 << 20}

func requireLimit(t *testing.T, err error, says string) {
	t.Helper()
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), says) {
		t.Fatalf("error %v; want ErrLimit saying %q", err, says)
	}
}

func TestExtractWritesFilesAndDirectories(t *testing.T) {
	out, err := extract(t, tarball(t,
		entry{name: "fleet", typ: tar.TypeDir},
		entry{name: "fleet/gpu.yaml", body: "kind: Skyhook\n"},
		entry{name: "fleet/sub/net.yml", body: "kind: Skyhook\n"},
	), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleet/gpu.yaml", "fleet/sub/net.yml"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != "kind: Skyhook\n" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}

func TestManyFilesAreBounded(t *testing.T) {
	var entries []entry
	for i := range 500 {
		entries = append(entries, entry{name: "d/f" + strconv.Itoa(i)})
	}
	out, err := extract(t, tarball(t, entries...), small)
	requireLimit(t, err, "more than 100 files and directories")
	var files int
	_ = filepath.WalkDir(out, func(_ string, d fs.DirEntry, _ error) error {
		if d != nil && d.Type().IsRegular() {
			files++
		}
		return nil
	})
	if files > small.Entries {
		t.Errorf("%d files written past the limit of %d", files, small.Entries)
	}
}

func TestHugeDeclaredSize(t *testing.T) {
	start := time.Now()
	// A terabyte announced, nothing sent: refused at the header.
	_, err := extract(t, tarball(t, entry{name: "big.yaml", size: 1 << 40}), DefaultLimits)
	requireLimit(t, err, `tar "big.yaml" is bigger than max archive size of 104857600 bytes`)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestSeveralFilesOverTheBytes(t *testing.T) {
	body := strings.Repeat("a", 400<<10)
	_, err := extract(t, tarball(t, entry{name: "a", body: body}, entry{name: "b", body: body}, entry{name: "c", body: body}), small)
	requireLimit(t, err, `tar "c" is bigger than max archive size of 1048576 bytes`)
}

func TestCompressibleHugeFileIsRefusedUnread(t *testing.T) {
	// 101 MiB of zeros is about 100 KiB of gzip: a download far under
	// the 50 MiB limit that unpacks over the 100 MiB one.
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	const size = 101 << 20
	if err := tw.WriteHeader(&tar.Header{Name: "zeros.yaml", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(tw, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	_ = tw.Close()
	_ = zw.Close()
	if raw.Len() > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed", raw.Len())
	}
	out, err := extract(t, raw.Bytes(), DefaultLimits)
	requireLimit(t, err, "bigger than max archive size")
	if _, err := os.Stat(filepath.Join(out, "zeros.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("zeros.yaml was written: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestHugeHeadersAreBoundedByTheStream(t *testing.T) {
	// Extended headers declare no size: only the stream limit counts
	// them. Each is under archive/tar's own 1 MiB cap on one.
	var entries []entry
	for i := range 10 {
		entries = append(entries, entry{name: "f" + strconv.Itoa(i), pax: map[string]string{"comment": strings.Repeat("x", 500<<10)}})
	}
	_, err := extract(t, tarball(t, entries...), small)
	requireLimit(t, err, "more than 2097152 bytes of tar stream")
}

func TestPathEscapesAreRefused(t *testing.T) {
	for _, name := range []string{"../x.yaml", "a/../../x.yaml", "/etc/x.yaml", "..\\x.yaml", "./../x.yaml"} {
		t.Run(name, func(t *testing.T) {
			_, err := extract(t, tarball(t, entry{name: "ok.yaml", body: "a"}, entry{name: name, body: "escaped"}), DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), "invalid name") {
				t.Fatalf("error %v; want the name refused", err)
			}
		})
	}
	// ".." alone passes Untar's name check and names the parent: it
	// cannot be written as a file (a directory is there), and as a
	// directory it makes nothing.
	for _, typ := range []byte{tar.TypeReg, tar.TypeDir} {
		if _, err := extract(t, tarball(t, entry{name: "..", typ: typ, body: "x"}), DefaultLimits); typ == tar.TypeReg && err == nil {
			t.Errorf("a file named .. was written")
		}
	}
}

func TestLinksAreSkipped(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := extract(t, tarball(t,
		entry{name: "abs.yaml", typ: tar.TypeSymlink, link: outside},
		entry{name: "rel.yaml", typ: tar.TypeSymlink, link: "../../../../../../../../etc/passwd"},
		entry{name: "root", typ: tar.TypeSymlink, link: "/"},
		entry{name: "root/tmp/through-link.yaml", body: "not through"}, // a directory root/, not the link
		entry{name: "hard.yaml", typ: tar.TypeLink, link: outside},
		entry{name: "hardrel.yaml", typ: tar.TypeLink, link: "../secret"},
		entry{name: "ok.yaml", body: "a"},
	), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"abs.yaml", "rel.yaml", "hard.yaml", "hardrel.yaml"} {
		if _, err := os.Lstat(filepath.Join(out, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want it skipped", name, err)
		}
	}
	if info, err := os.Lstat(filepath.Join(out, "root")); err != nil || !info.IsDir() {
		t.Errorf("root: %v; want a plain directory made for the file under it", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret" {
		t.Errorf("the file outside now holds %q", b)
	}
	if _, err := os.Stat("/tmp/through-link.yaml"); err == nil {
		t.Errorf("a file was written through the symlink")
	}
}

func TestDevicesAndFIFOsAreRefused(t *testing.T) {
	for _, typ := range []byte{tar.TypeChar, tar.TypeBlock, tar.TypeFifo} {
		if _, err := extract(t, tarball(t, entry{name: "dev", typ: typ}), DefaultLimits); err == nil || !strings.Contains(err.Error(), "unsupported file type") {
			t.Errorf("type %c: %v; want refused", typ, err)
		}
	}
}

func TestNonUTF8NamesAreFiles(t *testing.T) {
	name := "fleet/\xff\xfe\x80.yaml"
	out, err := extract(t, tarball(t, entry{name: name, body: "kind: Skyhook\n"}), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != "kind: Skyhook\n" {
		t.Errorf("%q: %q, %v", name, b, err)
	}
}

func TestGarbageIsAnError(t *testing.T) {
	good := tarball(t, entry{name: "a.yaml", body: strings.Repeat("kind: Skyhook\n", 100)})
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for name, tc := range map[string]struct {
		data []byte
		says string
	}{
		"empty":               {nil, "not gzip-compressed"},
		"not gzip":            {[]byte("PK\x03\x04 a zip file"), "not gzip-compressed"},
		"plain tar":           {tarStream(t, entry{name: "a.yaml", body: "a"}), "not gzip-compressed"},
		"truncated gzip":      {good[:len(good)/2], "unexpected EOF"},
		"corrupt deflate":     {flipped, ""},
		"gzip of no tar":      {gz(t, []byte("hello, not a tarball")), "extracting the artifact"},
		"gzip of nothing":     {gz(t, nil), ""},
		"truncated in a file": {gz(t, tarStream(t, entry{name: "a.yaml", body: strings.Repeat("a", 4096)})[:1024]), "unexpected EOF"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := extract(t, tc.data, small)
			if name == "gzip of nothing" {
				return // an empty tar stream is an empty artifact: either answer is fine
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v; want one saying %q", err, tc.says)
			}
		})
	}
}
