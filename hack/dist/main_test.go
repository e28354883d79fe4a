package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewPlugin is the part of krew's v1alpha2 Plugin the checks read.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

func readManifest(t *testing.T, path string) krewPlugin {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		t.Fatalf("%s is not a krew Plugin: %v", path, err)
	}
	return p
}

// TestDistFillsChecksums builds one platform's archive and checks what it
// holds, that the manifest carries its real sha256, and that a rebuild gives
// the same bytes.
func TestDistFillsChecksums(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "krew.yaml")
	build := func() string {
		if err := Build("v0.0.0-test", dir, manifest, []Platform{{OS: "linux", Arch: "amd64"}}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "kubectl-kro_v0.0.0-test_linux_amd64.tar.gz"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
	first := build()
	files := archiveFiles(t, filepath.Join(dir, "kubectl-kro_v0.0.0-test_linux_amd64.tar.gz"))
	for name, mode := range map[string]int64{"kubectl-kro": 0o755, "kubectl_complete-kro": 0o755, "README.md": 0o644} {
		if got, ok := files[name]; !ok || got.Mode != mode {
			t.Errorf("archive entry %s: %+v, want mode %o", name, got, mode)
		}
	}
	if complete := files["kubectl_complete-kro"]; complete == nil || !strings.Contains(string(complete.data), "exec kubectl-kro __complete \"$@\"") {
		t.Errorf("kubectl_complete-kro does not hand kubectl's words to the plugin's completion: %+v", complete)
	}
	p := readManifest(t, manifest)
	if !strings.Contains(p.Spec.Caveats, "store/kro/v0.0.0-test/kubectl_complete-kro") {
		t.Errorf("caveats do not say where krew put kubectl_complete-kro:\n%s", p.Spec.Caveats)
	}
	if len(p.Spec.Platforms) != 1 || p.Spec.Platforms[0].SHA256 != first {
		t.Fatalf("manifest sha256 %+v does not match the archive's %s", p.Spec.Platforms, first)
	}
	if second := build(); second != first {
		t.Errorf("archives are not reproducible: %s then %s", first, second)
	}
}

// TestCheckedInManifest checks krew.yaml at the repository root: a valid
// Plugin for linux and darwin, amd64 and arm64, each with a checksum.
func TestCheckedInManifest(t *testing.T) {
	p := readManifest(t, "../../krew.yaml")
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "kro" || p.Spec.ShortDescription == "" {
		t.Errorf("header: %+v", p)
	}
	want := map[string]bool{"linux/amd64": false, "linux/arm64": false, "darwin/amd64": false, "darwin/arm64": false}
	for _, pl := range p.Spec.Platforms {
		key := pl.Selector.MatchLabels["os"] + "/" + pl.Selector.MatchLabels["arch"]
		if _, ok := want[key]; !ok {
			t.Errorf("unexpected platform %s", key)
		}
		want[key] = true
		if len(pl.SHA256) != 64 || pl.Bin != "kubectl-kro" || pl.URI == "" {
			t.Errorf("%s: uri %q sha256 %q bin %q", key, pl.URI, pl.SHA256, pl.Bin)
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("no platform %s", k)
		}
	}
}

// archivedFile is what a release archive holds under one name.
type archivedFile struct {
	Mode int64
	data []byte
}

func archiveFiles(t *testing.T, path string) map[string]*archivedFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*archivedFile{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = &archivedFile{Mode: h.Mode, data: data}
	}
}
