package installer

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// ExportInfo describes an exported package.
type ExportInfo struct {
	Name        string   `json:"name"`
	Files       int      `json:"files"`
	Bytes       int64    `json:"bytes"`
	RequiredEnv []string `json:"requiredEnv"`
	Stripped    []string `json:"stripped"` // files whose credentials were replaced
}

// Export writes name's installed copy to w as a zip with the package at the
// archive root, credentials stripped (manifest.StripCredentials): literal
// env/header values, URL credentials, credential arguments of MCP servers
// and hooks, and credential text in hook commands become ${VAR} references
// the host expands, listed in RequiredEnv for the person who installs it.
// Nothing is replaced by a mask: a masked value would break the plugin.
func (in *Installer) Export(ctx context.Context, name string, w io.Writer) (*ExportInfo, error) {
	_, e, err := in.lookup(name)
	if err != nil {
		return nil, err
	}
	if problem := in.rootProblem(*e); problem != "" {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "export %s: %s; nothing there is read (run `reasonix plugin doctor %s`)", name, problem, name)
	}
	pkg, err := manifest.Load(e.Root, e.loadOptions())
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", name, err)
	}
	// A plugin its marketplace entry described (strict: false, or entry
	// components) is exported with the manifest that reads it the same way
	// on its own.
	entryDoc, ownManifest, err := manifest.EntryDocument(e.Root, e.loadOptions())
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", name, err)
	}
	tree, err := plugind.ScanTree(e.Root, in.Budget)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", name, err)
	}
	strip := map[string]bool{}
	for _, p := range manifest.CredentialFiles(pkg) {
		strip[p] = true
	}
	info := &ExportInfo{Name: name, RequiredEnv: []string{}, Stripped: []string{}}
	env := map[string]bool{}
	zw := zip.NewWriter(w)
	if ownManifest {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: manifest.ClaudeManifest, Method: zip.Deflate})
		if err != nil {
			return nil, err
		}
		n, err := in.exportBytes(manifest.ClaudeManifest, entryDoc, fw, info, env)
		if err != nil {
			return nil, fmt.Errorf("export %s: %s: %w", name, manifest.ClaudeManifest, err)
		}
		info.Files++
		info.Bytes += n
	}
	for _, f := range tree.Files {
		if ownManifest && f.Path == manifest.ClaudeManifest {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr := &zip.FileHeader{Name: f.Path, Method: zip.Deflate}
		hdr.SetMode(0o644)
		if f.Executable {
			hdr.SetMode(0o755)
		}
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		n, err := in.exportFile(f, strip[f.Path], fw, info, env)
		if err != nil {
			return nil, fmt.Errorf("export %s: %s: %w", name, f.Path, err)
		}
		info.Files++
		info.Bytes += n
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	info.RequiredEnv = append(info.RequiredEnv, slices.Sorted(maps.Keys(env))...)
	return info, nil
}

func (in *Installer) exportFile(f plugind.File, strip bool, w io.Writer, info *ExportInfo, env map[string]bool) (int64, error) {
	if !strip {
		src, err := plugind.OpenRegular(nil, f.Source)
		if err != nil {
			return 0, err
		}
		defer src.Close()
		return io.Copy(w, src)
	}
	data, err := os.ReadFile(f.Source)
	if err != nil {
		return 0, err
	}
	return in.exportBytes(f.Path, data, w, info, env)
}

// exportBytes writes one credential-bearing document with its credentials
// replaced by references.
func (in *Installer) exportBytes(rel string, data []byte, w io.Writer, info *ExportInfo, env map[string]bool) (int64, error) {
	out, vars, changed, err := manifest.StripCredentials(rel, data)
	if err != nil {
		return 0, err
	}
	if changed {
		info.Stripped = append(info.Stripped, rel)
	}
	for _, v := range vars {
		env[v] = true
	}
	n, err := w.Write(out)
	return int64(n), err
}
