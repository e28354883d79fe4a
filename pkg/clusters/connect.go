package clusters

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Load turns kubeconfig bytes into a connection for its current context.
// A kubeconfig that points to files is refused: the files exist on the
// machine it was written on, not in the agent's container.
func Load(kubeconfig []byte) (*rest.Config, string, error) {
	if len(kubeconfig) == 0 {
		return nil, "", errors.New("the kubeconfig is empty")
	}
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("the kubeconfig does not parse: %w", err)
	}
	cc := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{})
	rc, err := cc.RawConfig()
	if err != nil {
		return nil, "", err
	}
	ctxName := rc.CurrentContext
	kctx, ok := rc.Contexts[ctxName]
	if !ok {
		return nil, "", fmt.Errorf("the kubeconfig's current context %q does not exist", ctxName)
	}
	var files []string
	if c, ok := rc.Clusters[kctx.Cluster]; ok && c.CertificateAuthority != "" {
		files = append(files, c.CertificateAuthority)
	}
	if a, ok := rc.AuthInfos[kctx.AuthInfo]; ok {
		for _, f := range []string{a.ClientCertificate, a.ClientKey, a.TokenFile} {
			if f != "" {
				files = append(files, f)
			}
		}
	}
	if len(files) > 0 {
		return nil, "", fmt.Errorf("the kubeconfig refers to files (%s); embed them with kubectl config view --flatten --minify", strings.Join(slices.Compact(files), ", "))
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("the kubeconfig is not usable: %w", err)
	}
	sum := sha256.Sum256(kubeconfig)
	return cfg, hex.EncodeToString(sum[:8]), nil
}

// Health is what one check of a cluster found.
type Health struct {
	// Version is the API server's gitVersion, when it answered.
	Version string
	// Kinds counts the kinds discovery listed.
	Kinds int
	// Unreachable is set when the API server did not answer.
	Unreachable error
	// Discovery is set when some API groups could not be listed.
	Discovery error
}

// Probe asks the API server for its version and its kinds, each request
// bounded by timeout.
func Probe(cfg *rest.Config, timeout time.Duration) Health {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Health{Unreachable: err}
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return Health{Unreachable: fmt.Errorf("API server %s: %w", cfg.Host, err)}
	}
	h := Health{Version: v.GitVersion}
	_, lists, err := dc.ServerGroupsAndResources()
	for _, l := range lists {
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				h.Kinds++
			}
		}
	}
	if err != nil {
		h.Discovery = err
	}
	return h
}
