package mirror

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// allowed applies the operator's policy to a repository, over any
// transport (its Place).
func (s *Server) allowed(src source.Source) error {
	key := src.Place()
	d := s.cfg.Policy.Check(key)
	if d.Allowed {
		return nil
	}
	return &apiError{Status: http.StatusForbidden, Code: plugind.CodeBlocked, Msg: d.Reason(key), Rule: d.Rule}
}

// outOfScope refuses, for the request's token, a repository its scopes do
// not cover (nil when they do, or when it has none). The answer names the
// repository and the token's own scopes, which its holder may know, and
// nothing of other tokens or of what the mirror holds: it is given before
// anything is looked up. It is install.blocked with no rule, so a client
// stops there (a refusal, never "mirror down", and never a fall-back
// upstream around it).
func (s *Server) outOfScope(ctx context.Context, src source.Source) *apiError {
	tok, key := tokenOf(ctx), src.Place()
	if tok.Scopes.Allows(key) {
		return nil
	}
	return &apiError{Status: http.StatusForbidden, Code: plugind.CodeBlocked, Msg: fmt.Sprintf(
		"%s is outside the scopes of the mirror token %q (%s); ask the mirror's operator for a token whose scopes cover it",
		key, tok.Name, strings.Join(tok.Scopes.Rules(), ", "))}
}

// submoduleOutOfScope refuses a snapshot of key@sha for a token whose
// scopes do not cover the repository of a submodule it holds: the archive
// holds that repository's content, fetched with the mirror's credentials,
// perhaps for another token. A submodule whose URL no longer parses as a
// source is refused too (fail closed). nil: the token may have it all.
func (s *Server) submoduleOutOfScope(ctx context.Context, key, sha string, subs []plugind.Submodule) *apiError {
	tok := tokenOf(ctx)
	if !tok.Scopes.Limited() {
		return nil
	}
	for _, sm := range subs {
		src, err := source.FromText(sm.URL)
		if err == nil && tok.Scopes.Allows(src.Place()) {
			continue
		}
		name := secrets.Mask(sm.URL)
		if err == nil {
			name = src.Place()
		}
		return &apiError{Status: http.StatusForbidden, Code: plugind.CodeBlocked, Msg: fmt.Sprintf(
			"%s@%s holds the submodule %s (at %s), which is outside the scopes of the mirror token %q (%s); ask the mirror's operator for a token whose scopes cover it, or ask for folders without it",
			key, host.Short(sha), name, sm.Path, tok.Name, strings.Join(tok.Scopes.Rules(), ", "))}
	}
	return nil
}

// detach is the context of work others may be waiting on: it outlives
// the request that happened to start it (a client that leaves does not
// waste it), ends with the replica (Serve cancels base), and is bounded.
func (s *Server) detach(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.WaitTimeout+s.cfg.FetchTimeout)
	stop := context.AfterFunc(s.base, cancel)
	return ctx, func() { stop(); cancel() }
}

// run reads a request's parameters (request) and answers its operation
// through the host stack (fn asks it about the query's repository),
// recording in e where the answer came from; when either fails, it answers
// the failure and ok is false.
func (s *Server) run(w http.ResponseWriter, r *http.Request, action string, fn func(context.Context, host.Repo, query) error) (q query, e *meta.Entry, ok bool) {
	if q, e, ok = s.request(w, r, action); !ok {
		return q, e, false
	}
	ctx, cancel := s.detach(r.Context())
	defer cancel()
	c := s.newCall()
	defer c.end()
	repo, err := c.open(ctx, q.src)
	if err == nil {
		err = c.ask(func() error { return fn(ctx, repo, q) })
	}
	switch e.Outcome = c.outcome(); {
	case e.Outcome != outcomeHit:
		s.m.add(cacheTotal, 1, "op", e.Action, "result", "miss")
	case err == nil:
		s.m.add(cacheTotal, 1, "op", e.Action, "result", "hit")
	}
	if err != nil {
		s.fail(w, r, e, err)
	}
	return q, e, err == nil
}

// refs lists the branches and tags of r. The Cached layer keeps a listing
// without its default branch's name: the mirror keeps that beside it.
func (s *Server) refs(ctx context.Context, r host.Repo) (*host.Refs, error) {
	refs, err := r.Refs(ctx)
	switch {
	case err != nil:
		return nil, err
	case refs.Head != "":
		return refs, s.cfg.DB.PutRefHead(ctx, r.Source().Key(), refs.Head)
	}
	refs.Head, err = s.cfg.DB.RefHead(ctx, r.Source().Key())
	return refs, err
}

// snapshot makes sure the archive of paths of src at sha is stored and
// returns it. The whole tree of a commit comes from upstream once, across
// replicas, whatever folders are asked for: a request for other folders of
// it is cut from the stored whole. Only a tree over the budget as a whole,
// or one refused or failing for something in one folder of it (a link, a
// submodule), is fetched folder by folder, as a client would (SPEC §8).
// The fetch lease is taken here, above the Cached layer: what it guards,
// the archive, is stored here, not by that layer.
func (s *Server) snapshot(ctx context.Context, src source.Source, sha string, paths []string) (meta.Stored, string, error) {
	key, pk := src.Key(), meta.PathsKey(paths)
	ctx, cancel := s.detach(ctx)
	defer cancel()
	c := s.newCall()
	defer c.end()
	for first := true; ; first = false {
		o, ok, err := s.cfg.DB.Snapshot(ctx, key, sha, pk)
		switch {
		case err != nil || ok:
			return o, c.outcome(), err
		case c.upstream.Load():
			return o, "", fmt.Errorf("the snapshot of %s@%s vanished from the mirror's database", key, host.Short(sha))
		case first:
			s.m.add(cacheTotal, 1, "op", "fetch", "result", "miss")
		}
		// Under the fetch lease, or after waiting for its holder.
		err = c.do(ctx, "fetch", key, sha, func(ctx context.Context) error { return s.materialize(ctx, c, src, sha, pk) })
		if err != nil && !c.again.Swap(false) {
			return meta.Stored{}, "", err
		}
	}
}

// materialize stores the archive of folders pk of src at sha, under the
// repository's fetch lease.
func (s *Server) materialize(ctx context.Context, c *call, src source.Source, sha, pk string) error {
	key := src.Key()
	tmp, err := os.MkdirTemp(s.cfg.TempDir, "reasonix-mirror-")
	if err != nil {
		return fmt.Errorf("stage %s@%s: %w", key, host.Short(sha), err)
	}
	defer os.RemoveAll(tmp)
	paths := meta.SplitPaths(pk)

	var files []plugind.File
	switch full, ok, err := s.cfg.DB.Snapshot(ctx, key, sha, ""); {
	case err != nil:
		return err
	case ok:
		files, err = s.unpack(ctx, full.Object, filepath.Join(tmp, "full"))
		if plugind.CodeOf(err) == plugind.CodeDigestMismatch {
			// The stored whole was altered: drop it and start over, which
			// fetches it from upstream again (its record is gone now).
			if err := s.heal(ctx, full.Digest); err != nil {
				return err
			}
			return s.materialize(ctx, c, src, sha, pk)
		}
		if err != nil {
			return err
		}
		s.keepTreeList(full.Digest, files)
		return s.storeFolders(ctx, src, sha, pk, files, submodulesIn(full.Submodules, paths))
	default:
		files, subs, err := s.fetchUpstream(ctx, c, src, sha, nil, filepath.Join(tmp, "full"))
		if err == nil {
			digest, err := s.store(ctx, key, sha, "", files, subs)
			if err != nil {
				return err
			}
			s.keepTreeList(digest, files)
			s.keepMarketplaces(ctx, key, sha, files, subs)
			if pk == "" {
				return nil
			}
			return s.storeFolders(ctx, src, sha, pk, files, submodulesIn(subs, paths))
		}
		if !spoilsOnlySome(err) || pk == "" {
			return err
		}
		// These folders alone, from upstream. The Cached layer remembers
		// a refusal of the whole (over the budget, unsafe somewhere), so
		// other folders of this commit are not tried whole again for a
		// while; a submodule that could not be fetched may be next time.
		files, subs, err = s.fetchUpstream(ctx, c, src, sha, paths, filepath.Join(tmp, "part"))
		if err != nil {
			return err
		}
		return s.storeFolders(ctx, src, sha, pk, files, subs)
	}
}

// storeFolders stores the snapshot of folders pk of src at sha, cut from
// files (the whole tree's, or those folders' alone), and, with a checksum
// log, appends their records (recordServed).
func (s *Server) storeFolders(ctx context.Context, src source.Source, sha, pk string, files []plugind.File, subs []plugind.Submodule) error {
	paths := meta.SplitPaths(pk)
	if _, err := s.store(ctx, src.Key(), sha, pk, subset(files, paths), subs); err != nil {
		return err
	}
	if s.sumLog != nil {
		s.sumLog.recordServed(ctx, src, sha, paths, files)
	}
	return nil
}

// spoilsOnlySome reports a failure of a whole tree that the folders asked
// for may not share: the whole is over the budget, or something in it is
// refused or cannot be fetched (a link, a submodule) in a folder that may
// not be one of them. Those folders are then fetched alone.
func spoilsOnlySome(err error) bool {
	switch plugind.CodeOf(err) {
	case plugind.CodeBudgetExceeded, plugind.CodeUnsafeArchive:
		return true
	}
	_, inOneFolder := tarball.PathOf(err)
	return inOneFolder
}

// transient reports an upstream failure worth sharing for failTTL with
// the requests that waited for it: one with an error code (what upstream
// said, not the mirror's own storage failing), neither a not-found nor a
// verdict on the content (the Cached layer remembers those), nor the
// mirror giving up.
func transient(ctx context.Context, err error) bool {
	return ctx.Err() == nil && plugind.CodeOf(err) != "" && host.KindOf(err) == "" && !host.Fatal(err)
}

// fetchUpstream writes paths of src at sha (nil: everything) into dest,
// proving the commit is on a branch or tag first: the mirror never stores a
// commit that only a fork network holds. It returns the files and the
// submodules written among them, and records the git tree ids the fetch
// proved (every folder's, for the whole tree) before the caller stores the
// snapshot: the checksum log's records carry them, and a folder of a
// stored whole tree is answered for long after the fetch.
func (s *Server) fetchUpstream(ctx context.Context, c *call, src source.Source, sha string, paths []string, dest string) ([]plugind.File, []plugind.Submodule, error) {
	r, err := c.open(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	got, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Paths: paths, Budget: s.cfg.Budget, Verify: true,
		Submodules: host.Submodules(c.open, src, 1)})
	if err != nil {
		return nil, nil, err
	}
	if !got.Verified {
		if err := c.ask(func() error { return r.Reachable(ctx, sha, "") }); err != nil {
			return nil, nil, err
		}
	}
	_, tree, err := plugind.TreeDigest(dest, s.cfg.Budget)
	if err != nil {
		return nil, nil, fmt.Errorf("%s@%s: %w", src.Key(), host.Short(sha), err)
	}
	if got.Proof == host.ProofGitTree {
		if err := s.cfg.DB.PutGitTrees(ctx, src.Key(), sha, got.GitTrees); err != nil {
			return nil, nil, err
		}
	}
	s.log.Info("fetched upstream", "repo", src.Key(), "sha", sha, "transport", got.Transport, "files", len(tree.Files), "bytes", tree.Bytes, "submodules", len(got.Submodules))
	return tree.Files, got.Submodules, nil
}

// submodulesIn is what of subs, a whole tree's submodules, the folders
// paths hold (nil paths: the whole tree).
func submodulesIn(subs []plugind.Submodule, paths []string) []plugind.Submodule {
	if len(paths) == 0 {
		return subs
	}
	var out []plugind.Submodule
	for _, p := range paths {
		for _, sm := range plugind.SubmodulesOf(subs, p) {
			if !slices.Contains(out, sm) {
				out = append(out, sm)
			}
		}
	}
	return out
}

// unpack downloads a stored archive into dest and checks it against its
// digest before anything is cut from it.
func (s *Server) unpack(ctx context.Context, o meta.Object, dest string) ([]plugind.File, error) {
	rc, _, err := s.cfg.Objects.Get(ctx, o.Digest)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if _, err := tarball.ExtractTarGz(ctx, rc, dest, tarball.Options{Budget: s.cfg.Budget}); err != nil {
		return nil, fmt.Errorf("stored archive %s: %w", o.Digest, err)
	}
	d, tree, err := plugind.TreeDigest(dest, s.cfg.Budget)
	if err != nil {
		return nil, fmt.Errorf("stored archive %s: %w", o.Digest, err)
	}
	if d != o.Digest {
		s.log.Error("a stored archive does not match its digest; the object store was altered", "digest", o.Digest, "got", d)
		return nil, plugind.Errorf(plugind.CodeDigestMismatch, "the mirror's stored archive %s holds a tree whose digest is %s: the object store was altered", o.Digest, d)
	}
	return tree.Files, nil
}

// store uploads the archive of files (once: objects are immutable) and
// records it as holding pk of repo at sha, with the submodules subs.
func (s *Server) store(ctx context.Context, repo, sha, pk string, files []plugind.File, subs []plugind.Submodule) (digest string, err error) {
	digest = plugind.DigestFiles(files)
	if o, ok, err := s.cfg.DB.GetObject(ctx, digest); err != nil {
		return "", err
	} else if ok {
		if have, err := s.cfg.Objects.Has(ctx, digest); err != nil {
			return "", err
		} else if have {
			return digest, s.cfg.DB.PutSnapshot(ctx, repo, sha, pk, o, subs)
		}
	}
	f, err := os.CreateTemp(s.cfg.TempDir, "reasonix-mirror-*.tar.gz")
	if err != nil {
		return "", fmt.Errorf("archive %s@%s: %w", repo, host.Short(sha), err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, sum, err := writeArchive(ctx, f, files)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return "", fmt.Errorf("archive %s@%s: %w", repo, host.Short(sha), err)
	}
	if err := s.cfg.Objects.Put(ctx, digest, f, size); err != nil {
		return "", err
	}
	o := meta.Object{Digest: digest, Size: size, ArchiveSHA256: sum, Files: len(files), Bytes: totalBytes(files)}
	return digest, s.cfg.DB.PutSnapshot(ctx, repo, sha, pk, o, subs)
}

// keepMarketplaces stores the marketplace documents at the root of a
// fetched tree by (repository, commit), for operators and for GET
// /v1/marketplace — not one a submodule brought in (one mounted at
// .claude-plugin), which is another repository's, whose scopes that route
// does not check.
func (s *Server) keepMarketplaces(ctx context.Context, repo, sha string, files []plugind.File, subs []plugind.Submodule) {
	for _, f := range files {
		if _, ok := marketplace.DocumentAt(f.Path); !ok || f.Size > marketplace.MaxDocumentBytes || plugind.SubmodulesOf(subs, f.Path) != nil {
			continue
		}
		b, err := os.ReadFile(f.Source)
		if err == nil {
			err = s.cfg.DB.PutMarketplace(ctx, repo, sha, f.Path, b)
		}
		if err != nil {
			s.log.Warn("store a marketplace document", "repo", repo, "sha", sha, "err", err)
		}
	}
}

// heal forgets an archive found altered in the object store and removes
// it, so the next request for it stores it again from upstream.
func (s *Server) heal(ctx context.Context, digest string) error {
	s.log.Error("an archive in the object store does not match its record; removing it so it is fetched again", "digest", digest)
	if err := s.cfg.DB.ForgetObject(ctx, digest); err != nil {
		return err
	}
	return s.cfg.Objects.Remove(ctx, digest)
}
