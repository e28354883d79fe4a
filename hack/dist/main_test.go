package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
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

// TestDistFillsChecksums builds one platform's archive and checks that the
// manifest carries its real sha256, and that a rebuild gives the same bytes.
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
	p := readManifest(t, manifest)
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
