// Command image packs the static kro-agent binary into an OCI image tarball
// on an empty base, with go-containerregistry: no container engine and no
// registry needed. Load it with `docker load`, `ctr import` or `crane push`.
//
//	go run ./hack/image -binary bin/linux-amd64/kro-agent -tag kro-agent:dev -o bin/kro-agent-image.tar
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	binary := flag.String("binary", "", "static linux binary of the agent")
	tag := flag.String("tag", "kro-agent:dev", "image reference written into the tarball")
	out := flag.String("o", "bin/kro-agent-image.tar", "output tarball")
	arch := flag.String("arch", "amd64", "architecture of the binary")
	flag.Parse()
	if err := run(*binary, *tag, *out, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(binary, tag, out, arch string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	// One layer: the binary at /kro-agent, owned by the non-root user the
	// Deployment runs as, which the kernel asks of a process that hands
	// back its binary's start-up pages (pkg/binarypages). A fixed time
	// keeps the digest reproducible.
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: "kro-agent", Mode: 0o755, Size: int64(len(data)), Uid: 65532, Gid: 65532, ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Config = v1.Config{Entrypoint: []string{"/kro-agent"}, User: "65532:65532"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return err
	}
	digest, _ := img.Digest()
	fmt.Printf("wrote %s (%s, %s)\n", out, ref, digest)
	return nil
}
