// Package artifact extracts a Flux source artifact (a gzip-compressed
// tarball, as source-controller serves it) into a directory, with every
// input treated as hostile: bounded in what it may write and in how much of
// the stream it reads, and never writing outside the directory.
//
// The extraction itself is Flux's (github.com/fluxcd/pkg/tar's Untar: names
// with "..", absolute names and backslashes are refused, devices and FIFOs
// too); this package adds what Untar does not bound:
//
//   - the number of entries (files and directories), which Untar counts
//     nowhere: a tarball of empty files costs no bytes and one inode each;
//   - the bytes of the decompressed tar stream as a whole, headers and
//     padding included: Untar counts only the sizes entries declare, and a
//     stream of huge extended (PAX) headers declares none;
//
// and it drops symbolic and hard links (source-controller never puts one
// in an artifact: its tarballs hold regular files and directories only; a
// hard link would otherwise come out as an empty file).
package artifact

import (
	archivetar "archive/tar"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fluxcd/pkg/tar"
)

// Limits bounds one extraction.
type Limits struct {
	// Bytes is the most the entries' contents may add up to (their
	// declared sizes, checked before any is written).
	Bytes int64
	// Entries is the most files and directories the tarball may hold
	// (links included, though they are not written).
	Entries int
	// Stream is the most bytes of decompressed tar stream read: contents,
	// headers, extended headers and padding.
	Stream int64
}

// DefaultLimits are the operator's limits (docs/gitops.md): 100 MiB of
// contents (Flux's own default for an artifact), 50,000 entries, and the
// contents plus 64 MiB for headers and padding (about 1.3 KiB per entry at
// the most entries) in the decompressed stream.
var DefaultLimits = Limits{Bytes: 100 << 20, Entries: 50_000, Stream: 100<<20 + 64<<20}

// ErrLimit is wrapped by the error of an artifact over a limit.
var ErrLimit = errors.New("artifact over a limit")

// Extract reads the gzip-compressed tarball r into dir (created when
// missing) within limits. Links are skipped. The error of an artifact over
// a limit wraps ErrLimit and names the limit.
func Extract(r io.Reader, dir string, limits Limits) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("artifact is not gzip-compressed: %w", err)
	}
	stream := &boundedReader{r: zr, left: limits.Stream, limit: limits.Stream}
	var entries int
	filter := func(name string, fi os.FileInfo) bool {
		entries++
		if entries > limits.Entries {
			// Untar cannot be told to stop from here: the next read
			// of the stream fails instead, before another header.
			stream.fail(fmt.Errorf("%w: more than %d files and directories", ErrLimit, limits.Entries))
			return true
		}
		return fi.Mode()&os.ModeSymlink != 0 || isHardLink(fi)
	}
	err = tar.Untar(stream, dir, tar.WithSkipGzip(), tar.WithMaxUntarSize(int(limits.Bytes)), tar.WithSkipSymlinks(), tar.WithFilter(filter))
	if failed := stream.failed(); failed != nil {
		return failed
	}
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "bigger than max archive size"):
		// Untar's own limit on the declared sizes (its message names
		// the entry and the limit; TestHugeDeclaredSize pins it).
		return fmt.Errorf("%w: %v", ErrLimit, err)
	case isGzipError(err):
		return fmt.Errorf("artifact is not a valid gzip stream: %w", err)
	default:
		return fmt.Errorf("extracting the artifact: %w", err)
	}
}

// isGzipError reports whether err is the decompressor's.
func isGzipError(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt)
}

// isHardLink reports whether a tar entry's FileInfo is a hard link's:
// archive/tar gives those a regular file's mode.
func isHardLink(fi os.FileInfo) bool {
	h, ok := fi.Sys().(*archivetar.Header)
	return ok && h.Typeflag == archivetar.TypeLink
}

// boundedReader reads at most limit bytes, then fails with a limit error
// (io.LimitReader would end the stream instead, which the tar reader
// reports as a truncated archive); fail makes every later read fail.
type boundedReader struct {
	r           io.Reader
	left, limit int64
	err         error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if err := b.failed(); err != nil {
		return 0, err
	}
	if b.left <= 0 {
		b.fail(fmt.Errorf("%w: more than %d bytes of tar stream (contents, headers and padding)", ErrLimit, b.limit))
		return 0, b.failed()
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// fail keeps the first error.
func (b *boundedReader) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *boundedReader) failed() error { return b.err }
