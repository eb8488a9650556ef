package resolver

import (
	"bytes"
	"context"

	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// docAhead is a marketplace document parsed while its ref was asked (a
// round trip and a cache write): on a warm re-plan the ref has not moved,
// and the parse (12 ms at 1,000 entries) is done when the pin comes back.
// marketplaceDoc takes it only for the very bytes it reads.
type docAhead struct {
	done     chan struct{}
	key, sha string
	data     []byte
	doc      *marketplace.Marketplace
	err      error
}

// parseAhead starts parsing, beside the pin of src's ref, the marketplace
// document at src's folder (Claude's, where most are) as cached at the
// commit the ref was last pinned to. nil when there is nothing to parse
// ahead: a commit is asked for, the ref was never pinned, there is no
// cache, or the daemon, which keeps what it parsed (Decoded).
func (s *resolve) parseAhead(ctx context.Context, repo host.Repo, src source.Source, opts marketplace.Options) *docAhead {
	if s.cache == nil || s.cfg.Decoded != nil || source.IsSHA(src.Ref) {
		return nil
	}
	last, ok, err := s.cache.GetRef(ctx, repo.Source().Key(), host.RefName(src.Ref))
	if err != nil || !ok {
		return nil
	}
	doc := marketplace.Documents[0]
	a := &docAhead{done: make(chan struct{}), key: repo.Source().Key() + "/" + joinSlash(src.Subdir, doc.Path), sha: last.SHA}
	go func() {
		defer close(a.done)
		if data, ok := s.cache.Marketplace(ctx, a.key, a.sha); ok {
			a.data = data
			a.doc, a.err = doc.Parse(data, opts)
		}
	}()
	return a
}

// wait waits for the parse to end.
func (a *docAhead) wait() {
	if a != nil {
		<-a.done
	}
}

// parsed returns what parseAhead made of data, the document at key and
// sha, when it parsed those bytes.
func (a *docAhead) parsed(key, sha string, data []byte) (doc *marketplace.Marketplace, ok bool, err error) {
	if a == nil || a.key != key || a.sha != sha {
		return nil, false, nil
	}
	a.wait()
	if a.data == nil || !bytes.Equal(a.data, data) {
		return nil, false, nil
	}
	return a.doc, true, a.err
}
