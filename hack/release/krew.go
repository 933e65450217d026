package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Krew's plugin manifest (krew.sigs.k8s.io/docs/developer-guide/plugin-manifest),
// the fields liqoctl's uses.
type (
	krewPlugin struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Metadata   krewMetadata `json:"metadata"`
		Spec       krewSpec     `json:"spec"`
	}
	krewMetadata struct {
		Name string `json:"name"`
	}
	krewSpec struct {
		Version          string         `json:"version"`
		Homepage         string         `json:"homepage"`
		ShortDescription string         `json:"shortDescription"`
		Description      string         `json:"description"`
		Platforms        []krewPlatform `json:"platforms"`
	}
	krewPlatform struct {
		Selector krewSelector `json:"selector"`
		URI      string       `json:"uri"`
		Sha256   string       `json:"sha256"`
		Files    []krewFile   `json:"files"`
		Bin      string       `json:"bin"`
	}
	krewSelector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	krewFile struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// krewManifest is the name of the plugin manifest in the release.
const krewManifest = "plugin.yaml"

// writeKrewManifest writes the krew manifest of the plugin "liqo" (kubectl
// liqo): per archive, its platform, its URL under url and its SHA-256.
func writeKrewManifest(dir, version, url string, archives []built) (string, error) {
	m := krewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   krewMetadata{Name: "liqo"},
		Spec: krewSpec{
			Version:          version,
			Homepage:         "https://github.com/liqo-go/liqo",
			ShortDescription: "Peer clusters and offload namespaces to them",
			Description: `liqoctl, as the kubectl plugin "kubectl liqo", installs liqo-go in a
cluster, peers it with other clusters, which then appear as virtual nodes,
and offloads namespaces to them: their pods run in the peers, with the
Services, ConfigMaps and Secrets they use.`,
		},
	}
	for _, a := range archives {
		sum, err := sha256File(filepath.Join(dir, a.file))
		if err != nil {
			return "", err
		}
		m.Spec.Platforms = append(m.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": a.platform.os, "arch": a.platform.arch}},
			URI:      strings.TrimSuffix(url, "/") + "/" + a.file,
			Sha256:   sum,
			Files:    []krewFile{{From: a.platform.binary(), To: "."}},
			Bin:      a.platform.binary(),
		})
	}
	data, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, krewManifest)
	return path, os.WriteFile(path, data, 0o644)
}

// sumsFile lists the SHA-256 of every file of the release.
const sumsFile = "SHA256SUMS"

// writeSums writes SHA256SUMS for the files directly in dir, in the format
// of sha256sum (sha256sum -c SHA256SUMS checks them). The images' layout,
// a directory, is left out: its blobs are named by their SHA-256 already.
func writeSums(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == sumsFile {
			continue
		}
		sum, err := sha256File(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		lines = append(lines, fmt.Sprintf("%s  %s\n", sum, e.Name()))
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	path := filepath.Join(dir, sumsFile)
	return path, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
