package installer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
)

// sourceRead is how a request's source reads: what to resolve, and the
// entry and known marketplace a name chose.
type sourceRead struct {
	src source.Source
	// entry is the entry NAME@MARKET selects ("" otherwise).
	entry string
	// market is the known marketplace the source was read through: MARKET
	// of NAME@MARKET, or a bare NAME that is a known marketplace.
	market string
}

// readSource is the one rule for how the source of a plan or install
// request reads, for the CLI and the daemon alike (SPEC §5). The source was
// parsed once, as the request arrived (source.FromText); the
// names in it are looked up here:
//
//   - NAME@MARKET is entry NAME of the known marketplace MARKET;
//   - a bare NAME that a known marketplace has is that marketplace (a
//     folder of that name is written ./NAME, as ./NAME@MARKET is);
//   - any other relative path is a folder of the caller's working
//     directory — except in the daemon, which has none of its client's
//     and refuses it, suggesting the remote form it most likely meant.
//
// subdir (a recorded folder, from update) goes with remote sources only,
// never with a name: a known marketplace records its own folder.
func (in *Installer) readSource(src source.Source, subdir string) (sourceRead, error) {
	if src.IsZero() {
		return sourceRead{}, source.ErrEmpty()
	}
	raw := src.String()
	switch {
	case src.Kind == source.MarketEntry:
		k, err := in.knownMarketplace(src.Market)
		if err != nil {
			return sourceRead{}, err
		}
		return in.throughMarket(raw, subdir, k, src.Entry)
	case src.IsLocal() && !filepath.IsAbs(src.Path):
		return in.readRelative(raw, subdir, src)
	}
	if subdir != "" {
		if !src.IsRemote() {
			return sourceRead{}, plugind.Errorf(plugind.CodeInvalidSource, "a subdir goes with a repository source, not %s", src.Kind)
		}
		clean, err := plugind.LocalPath(subdir)
		if err != nil {
			return sourceRead{}, plugind.Errorf(plugind.CodeInvalidSource, "subdir: %w", err)
		}
		src = src.WithSubdir(clean)
	}
	return sourceRead{src: src}, nil
}

// readRelative reads a relative path: a known marketplace's name, a folder
// of the working directory, or (in the daemon) a refusal.
func (in *Installer) readRelative(raw, subdir string, src source.Source) (sourceRead, error) {
	var known []string
	if plugind.ValidateName(src.Path) == nil {
		all, err := LoadMarketplaces(in.Home.MarketplacesPath())
		if err != nil {
			return sourceRead{}, err
		}
		if k, ok := all.Find(src.Path); ok {
			if !in.NoWorkingDir {
				if err := sameAsFolder(src.Path, k); err != nil {
					return sourceRead{}, err
				}
			}
			return in.throughMarket(raw, subdir, k, "")
		}
		known = slices.Collect(all.names())
	}
	if in.NoWorkingDir {
		return sourceRead{}, relativeRefusal(raw, src, true, known)
	}
	if subdir != "" {
		return sourceRead{}, plugind.Errorf(plugind.CodeInvalidSource, "a subdir goes with a repository source, not %s", src.Kind)
	}
	return sourceRead{src: src}, nil
}

// throughMarket reads the known marketplace k (and its entry, when one is
// named) as the source to resolve.
func (in *Installer) throughMarket(raw, subdir string, k *KnownMarketplace, entry string) (sourceRead, error) {
	if subdir != "" {
		return sourceRead{}, plugind.Errorf(plugind.CodeInvalidSource, "%q names a known marketplace, which records its own folder: leave \"subdir\" out", raw)
	}
	return sourceRead{src: k.Source.Beside(k.Subdir), entry: entry, market: k.Name}, nil
}

// sameAsFolder refuses a bare name that is both a known marketplace and a
// different file or folder of the working directory: which one was meant
// cannot be told, and installing a whole marketplace in place of a folder
// would be a surprise.
func sameAsFolder(name string, k *KnownMarketplace) error {
	if _, err := os.Lstat(name); err != nil {
		return nil
	}
	if abs, err := filepath.Abs(name); err == nil && k.Source.IsLocal() && abs == k.Source.Path && k.Subdir == "" {
		return nil
	}
	return plugind.Errorf(plugind.CodeInvalidSource, "%q names both the known marketplace %s (%s) and the folder ./%s here: write ./%s for the folder, or the marketplace's source", name, k.Name, k.Source, name, name)
}

// relativeRefusal is the daemon's answer to a relative path: it cannot
// tell what the client's working directory was. byName says a bare name
// could have been a known marketplace's (known names them).
func relativeRefusal(raw string, src source.Source, byName bool, known []string) error {
	if hint := source.Suggest(src.Path); hint != "" {
		return plugind.Errorf(plugind.CodeInvalidSource, "source %q is not a known marketplace nor a path the daemon can read; did you mean %s?", raw, hint)
	}
	if byName && plugind.ValidateName(src.Path) == nil {
		hint := "no marketplace is known yet"
		if len(known) > 0 {
			hint = "known marketplaces: " + strings.Join(known, ", ")
		}
		return plugind.Errorf(plugind.CodeInvalidSource, "source %q is neither a known marketplace (%s) nor an absolute path: the daemon does not share your working directory", raw, hint)
	}
	return plugind.Errorf(plugind.CodeInvalidSource, "source %q is a relative path: the daemon does not share your working directory, so give the folder's absolute path", raw)
}

// isRelativeFolder reports whether src reads (readSource) as a folder or
// archive of some working directory, not as a known marketplace's name.
func (in *Installer) isRelativeFolder(src source.Source) bool {
	if !src.IsLocal() || filepath.IsAbs(src.Path) {
		return false
	}
	read, err := in.readSource(src, "")
	return err != nil || read.market == ""
}
