package installer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
)

// manifests is where a plan's manifests come from: invs, the cache
// Session that reads them (a query per few hundred) and keeps those loaded
// anew (written in one transaction), and ahead, those a re-plan decoded
// while its source resolved (readAhead). nil: no cache.
type manifests struct {
	invs  *cache.Session
	ahead map[string]*manifest.Package
}

func (in *Installer) manifests() *manifests {
	if in.Cache == nil {
		return nil
	}
	return &manifests{invs: in.Cache.Session()}
}

// readAhead reads and decodes the manifests stored under keys
// (installedKeys), beside the resolve, on the core it leaves idle: on a
// warm re-plan of 1,000 entries, 9 ms of reads and 8 of decoding that
// were the critical path's (issue 24).
func (m *manifests) readAhead(ctx context.Context, keys []string) {
	if m == nil {
		return
	}
	m.invs.LoadInventories(ctx, keys)
	m.ahead = make(map[string]*manifest.Package, len(keys))
	for _, k := range keys {
		if pkg, ok := m.cached(ctx, k); ok {
			m.ahead[k] = pkg
		}
	}
}

// cached returns the manifest stored under key, decoded.
func (m *manifests) cached(ctx context.Context, key string) (*manifest.Package, bool) {
	body, ok := m.invs.Inventory(ctx, key)
	if !ok {
		return nil, false
	}
	var pkg manifest.Package
	if jsonv1.Unmarshal(body, &pkg) != nil { // as fast as the registry (parseState)
		return nil, false
	}
	return &pkg, true
}

// loadManifest reads a candidate's manifest. A store tree with a known digest
// never changes, so what Load made of it is cached by (loader version,
// digest, name override) and a warm re-plan parses nothing.
func (in *Installer) loadManifest(ctx context.Context, c resolver.Candidate, opts manifest.LoadOptions, m *manifests) (*manifest.Package, error) {
	if c.Digest == "" || m == nil {
		return manifest.Load(c.Dir, opts)
	}
	key := manifestKey(c, opts)
	return cache.Remember(in.Decoded, func() string { return key }, func() (*manifest.Package, error) {
		if pkg := m.ahead[key]; pkg != nil {
			return pkg, nil
		}
		if pkg, ok := m.cached(ctx, key); ok {
			return pkg, nil
		}
		pkg, err := manifest.Load(c.Dir, opts)
		if err != nil {
			return nil, err
		}
		if body, err := json.Marshal(pkg); err == nil {
			_ = m.invs.PutInventory(key, body) // stored with the others (planCandidates)
		}
		return pkg, nil
	})
}

// loadOptions says how c's manifest is read. A marketplace entry's name is
// the installed name (SPEC §7), whatever the manifest calls itself.
func loadOptions(req Request, c resolver.Candidate, single bool) manifest.LoadOptions {
	if single {
		return manifest.LoadOptions{Name: req.Name, Implied: req.Name, Entry: c.Manifest, Prefer: c.Prefer}
	}
	return manifest.LoadOptions{Name: c.Name, Implied: c.Name, Entry: c.Manifest, Prefer: c.Prefer}
}

// manifestKey names what Load makes of c's store tree with opts: the tree
// never changes, so the loader version, its digest and the options do.
// (Concatenated, not formatted: a re-plan makes three thousand.)
func manifestKey(c resolver.Candidate, opts manifest.LoadOptions) string {
	return "manifest/v" + strconv.Itoa(manifest.LoaderVersion) + "\x00" + c.Digest + "\x00" + opts.Name + "\x00" + opts.Implied + "\x00" + string(opts.Prefer) + "\x00" + entryKey(opts.Entry)
}

// entryKey identifies an entry manifest in cache keys.
func entryKey(e *manifest.EntryManifest) string {
	if e == nil {
		return ""
	}
	sum := sha256.Sum256(e.Doc)
	return strconv.FormatBool(e.Strict) + ":" + hex.EncodeToString(sum[:8])
}

// installedKeys are the manifest keys of reg's plugins from src (those of
// req.Names if it names any) as a plan of src's entries asks for them when
// nothing changed.
func installedKeys(req Request, src source.Source, reg *Registry) []string {
	var keys []string
	for _, e := range reg.Plugins {
		if req.Name != "" || e.ContentDigest == "" || e.Marketplace.IsZero() || e.Marketplace.Key() != src.Key() {
			continue
		}
		if _, named := slices.BinarySearch(req.Names, e.Name); named || len(req.Names) == 0 {
			c := resolver.Candidate{Name: e.Name, Digest: e.ContentDigest, Manifest: e.EntryManifest, Prefer: e.ManifestPrefer}
			if m := e.EntryManifest; m != nil {
				// The registry holds it indented, HTML-escaped; a plan,
				// as the marketplace's read writes it (jsondoc's form).
				if doc, _, err := jsondoc.Parse(m.Doc); err == nil {
					as := *m
					as.Doc, c.Manifest = doc.Compact(), &as
				}
			}
			keys = append(keys, manifestKey(c, loadOptions(req, c, false)))
		}
	}
	return keys
}
