// Command build makes a release (`make release`, docs/release.md): it
// assembles the release files of config/release into -o, cross-compiling
// the CLI, builds the images as OCI layouts in <o>/images (config/images),
// and with -push pushes the images and the chart to -registry. It ends
// with a table of what it made.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/openvex/go-vex/pkg/vex"

	"github.com/skyhook-go/skyhook/api/imagesig"
	"github.com/skyhook-go/skyhook/config/images"
	"github.com/skyhook-go/skyhook/config/release"
)

type options struct {
	version, tag, registry, revision, out, downloadURL, license string
	signKey, builderID, vexFile                                 string
	images, push                                                bool
	// attestation is what -sign-key signs with, loaded before anything is
	// built or pushed.
	attestation *release.Attestation
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version, VERSION: 1.2.3, v1.2.3 or 1.2.3-rc.1")
	flag.StringVar(&o.tag, "tag", "", "the images' tag, which the chart's appVersion names (default: -version)")
	flag.StringVar(&o.registry, "registry", release.DefaultRegistry, "the images' repository prefix; the chart goes to <registry>/charts")
	flag.StringVar(&o.revision, "revision", "", "the git commit, for the images' revision label")
	flag.StringVar(&o.out, "o", "dist", "the folder the release is written to")
	flag.StringVar(&o.downloadURL, "download-url", "", "where the CLI archives will be downloaded from, for the krew manifest (default "+release.Homepage+"/releases/download/v<version>)")
	flag.StringVar(&o.license, "license", "LICENSE", "the LICENSE file the archives hold")
	flag.BoolVar(&o.images, "images", true, "build the images as OCI layouts in <o>/images")
	flag.BoolVar(&o.push, "push", false, "push the images and the chart to -registry (credentials of the default keychain: ~/.docker/config.json)")
	flag.StringVar(&o.signKey, "sign-key", "", "with -push: sign the images and the chart, attach SLSA provenance to the images and an SBOM and OpenVEX document to each platform (cosign's key format, password in $COSIGN_PASSWORD)")
	flag.StringVar(&o.builderID, "builder-id", "", "the provenance's builder id, such as the CI workflow's URI (default: the release's build type)")
	flag.StringVar(&o.vexFile, "vex", "", "an OpenVEX document whose statements the release attaches (default: a document with none)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	v, err := release.ParseVersion(o.version) // before anything is built
	if err != nil {
		return err
	}
	if o.push && !o.images {
		return fmt.Errorf("-push needs -images: the chart points at the images")
	}
	if o.tag == "" {
		o.tag = v.Given
	}
	if err := loadAttestation(&o, v); err != nil {
		return err
	}
	license, err := os.ReadFile(o.license)
	if err != nil {
		return fmt.Errorf("-license: %w", err)
	}
	artefacts, err := release.Assemble(ctx, o.out, release.Options{Version: o.version, Tag: o.tag, Registry: o.registry,
		DownloadURL: o.downloadURL, License: license, Build: goBuild(os.Stdout)})
	if err != nil {
		return err
	}
	if o.images {
		built, err := buildImages(ctx, o)
		if err != nil {
			return err
		}
		artefacts = append(artefacts, built...)
	}
	if o.push {
		if err := pushChart(ctx, o, v); err != nil {
			return err
		}
	}
	fmt.Println()
	return release.WriteTable(os.Stdout, artefacts)
}

// cliPackage is the CLI's main package, by import path so that the
// command works from any folder of the module.
const cliPackage = "github.com/skyhook-go/skyhook/cmd/skyhook"

// operatorVersion is the operator's version variable: the CLI runs the
// operator in-process for `skyhook sandbox`, so it is stamped too.
const operatorVersion = "github.com/skyhook-go/skyhook/cmd/manager/operator.Version"

// goBuild cross-compiles the CLI as the images' binaries are built: static,
// stripped, without the machine's paths (so the same source gives the same
// bytes), with the version stamped in. It prints each command.
func goBuild(log io.Writer) release.BuildFunc {
	return func(ctx context.Context, p release.Platform, version string) ([]byte, error) {
		dir, err := os.MkdirTemp("", "skyhook-release-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, release.Binary)
		ldflags := fmt.Sprintf("-s -w -X main.version=%s -X %s=%s", version, operatorVersion, version)
		env := []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Arch}
		cmd := exec.CommandContext(ctx, images.GoCommand(), "build", "-trimpath", "-ldflags", ldflags, "-o", out, cliPackage)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		fmt.Fprintf(log, "%s %s build -trimpath -ldflags %q -o %s %s\n", strings.Join(env, " "), cmd.Path, ldflags, out, cliPackage)
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build %s: %w", cliPackage, err)
		}
		return os.ReadFile(out)
	}
}

// buildImages builds the operator and agent images as `make images` does,
// writes their layouts under <o>/images and, with -push, pushes them. Each
// is a row of the table: its layout's size, and the index's digest.
func buildImages(ctx context.Context, o options) ([]release.Artefact, error) {
	build := images.BuildOptions{Version: o.version, Revision: o.revision, Log: os.Stdout,
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}}
	var rows []release.Artefact
	for _, c := range images.Components {
		ref, err := c.Ref(o.registry, o.tag)
		if err != nil {
			return nil, fmt.Errorf("-registry, -tag: %w", err)
		}
		idx, err := images.Build(ctx, c, build)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Image, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(o.out, "images", c.Image)
		if err := images.WriteLayout(dir, ref, idx); err != nil {
			return nil, err
		}
		fmt.Printf("built %s@%s in %s\n", ref, digest, dir)
		if o.push {
			if err := images.Push(ctx, ref, idx); err != nil {
				return nil, err
			}
			fmt.Printf("pushed %s@%s\n", ref, digest)
			if err := signImage(ctx, o, ref.Context().Digest(digest.String()), idx); err != nil {
				return nil, err
			}
		}
		size, err := dirSize(dir)
		if err != nil {
			return nil, err
		}
		rows = append(rows, release.Artefact{Name: filepath.Join("images", c.Image), Size: size, SHA256: digest.Hex})
	}
	return rows, nil
}

// pushChart pushes the packaged chart as an OCI artifact.
func pushChart(ctx context.Context, o options, v release.Version) error {
	tgz, err := os.ReadFile(filepath.Join(o.out, release.ChartFile(v)))
	if err != nil {
		return err
	}
	ref, digest, err := release.PushChart(ctx, o.registry, tgz, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", ref, digest)
	if o.attestation == nil {
		return nil
	}
	chart := ref.Context().Digest(digest.String())
	if err := release.SignChart(chart, o.withContext(ctx)); err != nil {
		return fmt.Errorf("signing %s: %w", chart, err)
	}
	fmt.Printf("signed %s\n", chart)
	return nil
}

// loadAttestation reads -sign-key (and -vex) before anything is built, so
// a wrong password or file fails the release at once.
func loadAttestation(o *options, v release.Version) error {
	if o.signKey == "" {
		if o.vexFile != "" || o.builderID != "" {
			return fmt.Errorf("-vex and -builder-id go with -sign-key")
		}
		return nil
	}
	if !o.push {
		return fmt.Errorf("-sign-key needs -push: signatures and attestations live beside the images in the registry")
	}
	key, err := imagesig.LoadPrivateKeyFile(o.signKey)
	if err != nil {
		return fmt.Errorf("-sign-key %s: %w", o.signKey, err)
	}
	a := &release.Attestation{Key: key, Version: v.Given, Tag: o.tag, Registry: o.registry, Revision: o.revision, BuilderID: o.builderID}
	if o.vexFile != "" {
		if a.VEX, err = vex.Load(o.vexFile); err != nil {
			return fmt.Errorf("-vex: %w", err)
		}
	}
	o.attestation = a
	return nil
}

// withContext is the attestation reaching the registry as the pushes do.
func (o options) withContext(ctx context.Context) release.Attestation {
	a := *o.attestation
	a.Remote = []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	return a
}

// signImage signs the pushed index and attaches its attestations, when
// -sign-key is given.
func signImage(ctx context.Context, o options, ref name.Digest, idx v1.ImageIndex) error {
	if o.attestation == nil {
		return nil
	}
	if err := release.SignImage(ref, idx, o.withContext(ctx)); err != nil {
		return fmt.Errorf("signing %s: %w", ref, err)
	}
	fmt.Printf("signed %s, with provenance, and an SBOM and VEX document per platform\n", ref)
	return nil
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}
