package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skyhook-go/skyhook/config/helm"
)

// ChartFile is the packaged chart's name, as `helm package` names it.
func ChartFile(v Version) string {
	return "skyhook-operator-" + v.Semver + ".tgz"
}

// writeChart packages the chart stamped with the version and with its
// images under the registry, checks that it loads back and lints, and
// returns the stamped chart.
func writeChart(w *writer, v Version, appVersion, registry string) (*chart.Chart, error) {
	ch, err := helm.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	ch.Metadata.Version = v.Semver
	ch.Metadata.AppVersion = appVersion
	if err := stampRegistry(ch, registry); err != nil {
		return nil, err
	}
	tgz, err := packageChart(ch)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart: %w", err)
	}
	if err := checkChart(tgz, v.Semver, appVersion); err != nil {
		return nil, fmt.Errorf("%s: %w", ChartFile(v), err)
	}
	_, err = w.put(ChartFile(v), tgz)
	return ch, err
}

// imageValues are the chart's image repositories, each a line of
// values.yaml and a path in its values.
var imageValues = []struct {
	image string
	path  []string
}{
	{"skyhook-operator", []string{"controllerManager", "manager", "image"}},
	{"skyhook-agent", []string{"controllerManager", "manager", "agent"}},
}

// stampRegistry points the chart's default images at the registry, so a
// chart pushed to a mirror installs from it without overrides. values.yaml
// is edited as text, since Helm packages that file as it is (its comments
// are the values' documentation), and the parsed values to match.
func stampRegistry(ch *chart.Chart, registry string) error {
	if registry == DefaultRegistry {
		return nil
	}
	var valuesFile *chart.File
	for _, f := range ch.Raw {
		if f.Name == chartutil.ValuesfileName {
			valuesFile = f
		}
	}
	if valuesFile == nil {
		return fmt.Errorf("the chart has no %s", chartutil.ValuesfileName)
	}
	for _, iv := range imageValues {
		from := "repository: " + DefaultRegistry + "/" + iv.image + "\n"
		if n := bytes.Count(valuesFile.Data, []byte(from)); n != 1 {
			return fmt.Errorf("%s holds %q %d times, want once", chartutil.ValuesfileName, strings.TrimSpace(from), n)
		}
		valuesFile.Data = bytes.Replace(valuesFile.Data, []byte(from), []byte("repository: "+registry+"/"+iv.image+"\n"), 1)
		if err := unstructured.SetNestedField(ch.Values, registry+"/"+iv.image, append(iv.path, "repository")...); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(iv.path, "."), err)
		}
	}
	return nil
}

// packageChart is the chart as `helm package` writes it, but with fixed
// file times: chartutil.Save stamps every file with the time of the call.
func packageChart(ch *chart.Chart) ([]byte, error) {
	dir, err := os.MkdirTemp("", "skyhook-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		return nil, err
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	files, err := readTarGz(saved)
	if err != nil {
		return nil, err
	}
	return tarGz(files)
}

// checkChart loads the packaged chart back as `helm install` would, checks
// its versions and lints it as `helm lint` does; an error fails the release.
func checkChart(tgz []byte, version, appVersion string) error {
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("does not load: %w", err)
	}
	if ch.Metadata.Version != version || ch.Metadata.AppVersion != appVersion {
		return fmt.Errorf("loads with version %q and appVersion %q, want %q and %q",
			ch.Metadata.Version, ch.Metadata.AppVersion, version, appVersion)
	}
	msgs, err := Lint(tgz)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Severity >= support.ErrorSev {
			return fmt.Errorf("lint: %s", m)
		}
	}
	return nil
}

// Lint lints a packaged chart with its default values, in the namespace
// the install files use, and returns every message (errors, warnings and
// information).
func Lint(tgz []byte) ([]support.Message, error) {
	dir, err := os.MkdirTemp("", "skyhook-lint-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := chartutil.Expand(dir, bytes.NewReader(tgz)); err != nil {
		return nil, fmt.Errorf("expanding the chart: %w", err)
	}
	linter := lint.All(filepath.Join(dir, helm.ChartDir), nil, helm.Default.Namespace, false)
	return linter.Messages, nil
}

// readTarGz reads the regular files of a .tar.gz, in their order.
func readTarGz(data []byte) ([]file, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var files []file
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: not a regular file", h.Name)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files = append(files, file{name: h.Name, mode: h.Mode, data: body})
	}
}
