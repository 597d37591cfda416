package vmnode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
)

// The machines boot one disk image, built here from Debian's packages by
// mmdebstrap into a directory and made a file system with mkfs.ext4 -d
// (neither needs a loop device or a mount), and cached under the
// project's cache like the binaries: a recipe's image is built once and
// rebuilt only when the recipe changes. Each machine writes to a qcow2
// overlay of its own on top of it, so two machines' disks are separate
// and the cached image is never written.

// imagePackages are what a node needs besides Debian's minimal base:
// systemd as PID 1, the kernel (with initramfs-tools to boot it), the
// container runtime and CNI plugins the real nodes use too, and the tools
// kube-proxy and the CNI bridge plugin call.
var imagePackages = []string{
	"systemd-sysv", "udev", "kmod", "linux-image-amd64", "initramfs-tools",
	"iproute2", "iptables", "conntrack", "ethtool", "procps", "e2fsprogs", "ca-certificates",
	"containerd", "runc", "containernetworking-plugins",
}

// imageSize is the size of the root file system (sparse): room for the
// images and containers a node pulls and runs.
const imageSize = "6G"

// Image is a built disk image and the kernel and initramfs it boots with
// (qemu loads them directly: no boot loader to install or wait for).
type Image struct {
	Dir    string
	Disk   string // raw ext4, the root file system
	Kernel string
	Initrd string
}

// imageRecipe is everything the image is built from; its fingerprint
// names the cache entry.
type imageRecipe struct {
	suite    string
	sources  []string // the machine's APT sources, files mmdebstrap reads
	packages []string
	files    map[string]guestFile
	// binaries are copied into the image, by their path in the guest.
	binaries map[string]string
}

func (r imageRecipe) fingerprint() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "suite %s\npackages %s\nsize %s\n", r.suite, strings.Join(r.packages, " "), imageSize)
	for _, src := range r.sources {
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "source %s %x\n", src, sha256.Sum256(data))
	}
	for _, path := range sortedKeys(r.files) {
		fmt.Fprintf(h, "file %s %o %x\n", path, r.files[path].mode, sha256.Sum256([]byte(r.files[path].content)))
	}
	for _, path := range sortedKeys(r.binaries) {
		// The cache path of a binary names its version and build recipe.
		fmt.Fprintf(h, "binary %s %s\n", path, r.binaries[path])
	}
	return hex.EncodeToString(h.Sum(nil)[:6]), nil
}

// EnsureImage returns the node image, building it into the cache of bin
// the first time (minutes: the packages are fetched through APT) with
// progress on log. It needs root, mmdebstrap and mkfs.ext4.
func EnsureImage(ctx context.Context, bin binaries.Options, log io.Writer) (*Image, error) {
	if bin.CacheDir == "" {
		dir, err := binaries.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		bin.CacheDir = dir
	}
	r, err := nodeImageRecipe(ctx, bin)
	if err != nil {
		return nil, err
	}
	key, err := r.fingerprint()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(bin.CacheDir, "vm", r.suite+"-"+key)
	img := &Image{Dir: dir, Disk: filepath.Join(dir, "disk.img"), Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img")}
	if imageComplete(dir) {
		return img, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	unlock, err := binaries.Lock(dir + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if imageComplete(dir) { // built by another process while we waited
		return img, nil
	}
	fmt.Fprintf(log, "building the virtual machine node image (Debian %s, %d packages) into %s (once per recipe)\n", r.suite, len(r.packages), dir)
	start := time.Now()
	stop := binaries.Heartbeat(log, "the virtual machine node image", time.Minute)
	err = r.build(ctx, dir, log)
	stop()
	if err != nil {
		return nil, fmt.Errorf("building the virtual machine node image: %w", err)
	}
	fmt.Fprintf(log, "built the virtual machine node image in %s\n", time.Since(start).Round(time.Second))
	return img, nil
}

const imageCompleteMarker = ".complete"

func imageComplete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, imageCompleteMarker))
	return err == nil
}

// build runs mmdebstrap into a staging directory beside dir, writes the
// recipe's files and binaries into the tree, makes the disk from it and
// renames the staging directory to dir. The tree itself is not kept.
func (r imageRecipe) build(ctx context.Context, dir string, log io.Writer) error {
	staging, err := os.MkdirTemp(filepath.Dir(dir), ".vm-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	// APT downloads as its own user (_apt) into the tree.
	if err := os.Chmod(staging, 0o755); err != nil {
		return err
	}
	root := filepath.Join(staging, "root")
	// The initramfs is made when the kernel is installed, so its settings
	// go in before: only the modules a virtio machine needs to mount its
	// root, which makes it a few MB instead of tens and boots faster.
	initramfs := `mkdir -p "$1/etc/initramfs-tools/conf.d" && printf 'MODULES=list\nCOMPRESS=gzip\n' > "$1/etc/initramfs-tools/conf.d/skyhook.conf" && printf 'virtio_pci\nvirtio_blk\nvirtio_net\next4\n' >> "$1/etc/initramfs-tools/modules"`
	args := []string{"--variant=minbase", "--include=" + strings.Join(r.packages, ","),
		"--essential-hook=" + initramfs, "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
		r.suite, root}
	args = append(args, r.sources...)
	fmt.Fprintf(log, "  mmdebstrap %s\n", strings.Join(args, " "))
	if err := run(ctx, log, "mmdebstrap", args...); err != nil {
		return err
	}
	if err := r.install(root); err != nil {
		return err
	}
	if err := r.exportBoot(root, staging); err != nil {
		return err
	}
	fmt.Fprintln(log, "  making the ext4 disk from the tree")
	disk := filepath.Join(staging, "disk.img")
	if err := run(ctx, log, "mkfs.ext4", "-q", "-L", "skyhook-root", "-d", root, disk, imageSize); err != nil {
		return err
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staging, imageCompleteMarker), nil, 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(dir) // a half-built leftover
	return os.Rename(staging, dir)
}

// install writes the recipe's files and binaries into the tree.
func (r imageRecipe) install(root string) error {
	for _, path := range sortedKeys(r.files) {
		f := r.files[path]
		if err := writeGuestFile(root, path, f); err != nil {
			return err
		}
	}
	for _, path := range sortedKeys(r.binaries) {
		data, err := os.ReadFile(r.binaries[path])
		if err != nil {
			return err
		}
		if err := writeGuestFile(root, path, guestFile{content: string(data), mode: 0o755}); err != nil {
			return err
		}
	}
	return nil
}

// exportBoot copies the kernel and initramfs out of the tree's /boot.
func (r imageRecipe) exportBoot(root, staging string) error {
	for name, glob := range map[string]string{"vmlinuz": "vmlinuz-*", "initrd.img": "initrd.img-*"} {
		found, _ := filepath.Glob(filepath.Join(root, "boot", glob))
		if len(found) != 1 {
			return fmt.Errorf("the image's /boot has %d files %s, want one", len(found), glob)
		}
		data, err := os.ReadFile(found[0])
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(staging, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// run runs a build command, its output to log.
func run(ctx context.Context, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// aptSources are this machine's APT source files, which mmdebstrap reads
// as its mirrors: the image comes from the same Debian archive as the
// machine's own packages, and nothing else is reached.
func aptSources() ([]string, error) {
	var out []string
	if st, err := os.Stat("/etc/apt/sources.list"); err == nil && st.Size() > 0 {
		out = append(out, "/etc/apt/sources.list")
	}
	for _, pattern := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		found, _ := filepath.Glob(pattern)
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, errors.New("this machine has no APT sources (/etc/apt/sources.list, /etc/apt/sources.list.d) to build the node image from")
	}
	return out, nil
}

// debianSuite is this machine's Debian release (VERSION_CODENAME), the
// suite its APT sources serve.
func debianSuite() (string, error) {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "", err
	}
	isDebian := false
	suite := ""
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, "=")
		v = strings.Trim(v, `"`)
		switch k {
		case "ID":
			isDebian = v == "debian"
		case "VERSION_CODENAME":
			suite = v
		}
	}
	if !isDebian || suite == "" {
		return "", fmt.Errorf("%w: the node image is built from Debian's packages, and this machine is not Debian (/etc/os-release)", ErrUnsupported)
	}
	return suite, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
