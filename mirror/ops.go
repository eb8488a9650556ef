package mirror

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// allowed applies the operator's policy to a repository.
func (s *Server) allowed(key string) error {
	d := s.cfg.Policy.Check(key)
	if d.Allowed {
		return nil
	}
	return &apiError{Status: http.StatusForbidden, Code: plugind.CodeBlocked, Msg: d.Reason(key), Rule: d.Rule}
}

// neg names one negative result to look for.
type neg struct{ kind, key string }

// negatives returns the first remembered negative result among want (and
// the repository's own), as the error it stands for.
func (s *Server) negatives(ctx context.Context, repo string, want ...neg) error {
	ws := make([]meta.Want, 0, len(want)+1)
	ws = append(ws, meta.Want{Kind: "repo"})
	for _, w := range want {
		ws = append(ws, meta.Want{Kind: w.kind, Key: w.key})
	}
	n, ok, err := s.cfg.DB.FirstNegative(ctx, repo, ws...)
	if err != nil || !ok {
		return err
	}
	return &plugind.Error{Code: plugind.Code(n.Code), Err: host.SentinelOf(n.Kind),
		Msg: fmt.Sprintf("%s (the mirror remembers this from %s ago)", n.Message, n.Age.Round(1e9))}
}

// remember records an upstream failure: a not-found for NegativeTTL (key
// naming the ref or commit it is about), anything else — a transient
// failure — for a few seconds under op, so the requests waiting for this
// attempt get its answer instead of each trying upstream again at once.
func (s *Server) remember(ctx context.Context, repo, op, key string, err error) {
	code := plugind.CodeOf(err)
	if code == "" {
		code = plugind.CodeSourceUnreadable
	}
	n := meta.Negative{Repo: repo, Code: string(code), Message: secrets.Mask(err.Error())}
	ttl := s.cfg.NegativeTTL
	switch kind := host.KindOf(err); {
	case kind == "repo":
		n.Kind = kind
	case kind != "":
		n.Kind, n.Key = kind, key
	case ctx.Err() != nil:
		return // our own cancellation says nothing about upstream
	default:
		n.Kind, n.Key, ttl = "failed", op, failTTL
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5e9)
	defer cancel()
	if err := s.cfg.DB.PutNegative(rctx, n, ttl); err != nil {
		s.log.Warn("remember an upstream failure", "repo", repo, "err", err)
	}
}

// upstream counts an upstream operation and returns its error with an
// error code: what upstream said is for the client to read, and toAPI
// tells it only errors that carry a code (or a not-found kind).
func (s *Server) upstream(op string, err error) error {
	s.countUpstream(op, err)
	if err == nil || host.KindOf(err) != "" {
		return err
	}
	return plugind.WithCode(plugind.CodeSourceUnreadable, err)
}

func (s *Server) countUpstream(op string, err error) {
	outcome := "ok"
	switch {
	case err == nil:
	case host.KindOf(err) != "":
		outcome = "not_found"
	default:
		outcome = "error"
	}
	s.m.upstream.WithLabelValues(op, outcome).Inc()
}

func (s *Server) open(src source.Source) (host.Repo, error) {
	r, err := s.cfg.Upstream.Open(src)
	if err != nil {
		return nil, plugind.WithCode(plugind.CodeSourceUnreadable, fmt.Errorf("open %s upstream: %w", src.Key(), err))
	}
	return r, nil
}

// openSubmodule opens, upstream, a submodule of a tree being fetched: the
// operator's policy applies to it as to any repository, so a tree cannot
// bring in content from a repository the mirror would refuse.
func (s *Server) openSubmodule(_ context.Context, src source.Source) (host.Repo, error) {
	if err := s.allowed(src.Key()); err != nil {
		return nil, err
	}
	return s.open(src)
}

// refs returns the branches and tags of src, at most RefTTL old.
func (s *Server) refs(ctx context.Context, src source.Source) (meta.RefList, string, error) {
	key := src.Key()
	var got meta.RefList
	check := func(ctx context.Context) (bool, error) {
		if err := s.negatives(ctx, key, neg{"failed", "refs"}); err != nil {
			return false, err
		}
		l, ok, err := s.cfg.DB.GetRefList(ctx, key)
		if ok && l.Age <= s.cfg.RefTTL {
			got = l
			return true, nil
		}
		return false, err
	}
	work := func(ctx context.Context) error {
		r, err := s.open(src)
		if err != nil {
			return err
		}
		refs, err := r.Refs(ctx)
		err = s.upstream("refs", err)
		if err != nil {
			s.remember(ctx, key, "refs", "", err)
			return err
		}
		return s.cfg.DB.PutRefList(ctx, key, meta.RefList{Head: refs.Head, Commits: refs.Commits})
	}
	outcome, err := s.once(ctx, "refs", leaseKey("refs", key, "list"), check, work)
	if err != nil {
		return meta.RefList{}, "", err
	}
	if outcome == outcomeHit {
		// A hit was read by this request's own check; anything else by
		// whichever request led, so it is read again below.
		return got, outcome, nil
	}
	l, ok, err := s.cfg.DB.GetRefList(ctx, key)
	if err == nil && !ok {
		err = fmt.Errorf("the ref listing of %s vanished from the mirror's database", key)
	}
	return l, outcome, err
}

// resolve pins ref of src ("" = the default branch), asking upstream at
// most once per RefTTL, conditionally.
func (s *Server) resolve(ctx context.Context, src source.Source, ref string) (meta.Ref, string, error) {
	key := src.Key()
	name := ref
	if name == "" {
		name = host.HeadRef
	}
	var got meta.Ref
	check := func(ctx context.Context) (bool, error) {
		if err := s.negatives(ctx, key, neg{"ref", name}, neg{"failed", "ref:" + name}); err != nil {
			return false, err
		}
		r, ok, err := s.cfg.DB.GetRef(ctx, key, name)
		if ok && r.Age <= s.cfg.RefTTL {
			got = r
			return true, nil
		}
		return false, err
	}
	work := func(ctx context.Context) error {
		r, err := s.open(src)
		if err != nil {
			return err
		}
		var known *host.Pin
		old, ok, err := s.cfg.DB.GetRef(ctx, key, name)
		if err != nil {
			return err
		}
		if ok && old.ETag != "" {
			known = &host.Pin{SHA: old.SHA, ETag: old.ETag}
		}
		pin, err := r.Resolve(ctx, ref, known)
		err = s.upstream("resolve", err)
		if err != nil {
			s.remember(ctx, key, "ref:"+name, name, err)
			return err
		}
		sha := pin.SHA
		if pin.NotModified && known != nil {
			sha = known.SHA
		}
		if !source.IsSHA(sha) {
			return plugind.Errorf(plugind.CodeSourceUnreadable, "%s of %s: upstream answered %q, not a commit id", host.DescribeRef(ref), key, sha)
		}
		if err := s.cfg.DB.PutRef(ctx, meta.Ref{Repo: key, Ref: name, SHA: sha, ETag: pin.ETag}); err != nil {
			return err
		}
		// A branch or tag head is on a branch or tag by definition.
		return s.cfg.DB.PutReachable(ctx, key, sha)
	}
	outcome, err := s.once(ctx, "resolve", leaseKey("ref", key, name), check, work)
	if err != nil {
		return meta.Ref{}, "", err
	}
	if outcome == outcomeHit {
		return got, outcome, nil
	}
	r, ok, err := s.cfg.DB.GetRef(ctx, key, name)
	if err == nil && !ok {
		err = fmt.Errorf("%s of %s vanished from the mirror's database", host.DescribeRef(ref), key)
	}
	return r, outcome, err
}

// reachable checks that commit sha is on a branch or tag of src (SPEC §6),
// once per (repository, commit) for good when it is.
func (s *Server) reachable(ctx context.Context, src source.Source, sha, hint string) (string, error) {
	key := src.Key()
	check := func(ctx context.Context) (bool, error) {
		if err := s.negatives(ctx, key, neg{"commit", sha}, neg{"unreachable", sha}, neg{host.KindCommitOrUnreachable, sha}, neg{"failed", "reach@" + sha}); err != nil {
			return false, err
		}
		return s.cfg.DB.Reachable(ctx, key, sha)
	}
	work := func(ctx context.Context) error {
		r, err := s.open(src)
		if err != nil {
			return err
		}
		if err := s.upstream("reachable", r.Reachable(ctx, sha, hint)); err != nil {
			s.remember(ctx, key, "reach@"+sha, sha, err)
			return err
		}
		return s.cfg.DB.PutReachable(ctx, key, sha)
	}
	return s.once(ctx, "reachable", leaseKey("reach", key, sha), check, work)
}

// pathsKey is the snapshots table's name for a set of folders: "" for the
// whole tree, else the sorted, de-duplicated paths, one per line.
func pathsKey(paths []string) string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || p == "." {
			return ""
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func splitPaths(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, "\n")
}

// snapshot makes sure the archive of paths of src at sha is stored and
// returns it. The whole tree of a commit comes from upstream once, across
// replicas, whatever folders are asked for: a request for other folders of
// it is cut from the stored whole. Only a tree over the budget as a whole,
// or one refused or failing for something in one folder of it (a link, a
// submodule), is fetched folder by folder, as a client would (SPEC §8).
func (s *Server) snapshot(ctx context.Context, src source.Source, sha string, paths []string) (meta.Object, string, error) {
	key := src.Key()
	pk := pathsKey(paths)
	var got meta.Object
	check := func(ctx context.Context) (bool, error) {
		if err := s.negatives(ctx, key, neg{"commit", sha}, neg{"unreachable", sha}, neg{host.KindCommitOrUnreachable, sha}, neg{"failed", "fetch@" + sha}); err != nil {
			return false, err
		}
		o, ok, err := s.cfg.DB.Snapshot(ctx, key, sha, pk)
		if ok {
			got = o
		}
		return ok, err
	}
	work := func(ctx context.Context) error { return s.materialize(ctx, src, sha, pk) }
	outcome, err := s.once(ctx, "fetch", leaseKey("fetch", key, sha), check, work)
	if err != nil {
		return meta.Object{}, "", err
	}
	if outcome == outcomeHit {
		return got, outcome, nil
	}
	o, ok, err := s.cfg.DB.Snapshot(ctx, key, sha, pk)
	if err == nil && !ok {
		err = fmt.Errorf("the snapshot of %s@%s vanished from the mirror's database", key, host.Short(sha))
	}
	return o, outcome, err
}

// materialize stores the archive of folders pk of src at sha, under the
// repository's fetch lease.
func (s *Server) materialize(ctx context.Context, src source.Source, sha, pk string) error {
	key := src.Key()
	tmp, err := os.MkdirTemp(s.cfg.TempDir, "reasonix-mirror-")
	if err != nil {
		return fmt.Errorf("stage %s@%s: %w", key, host.Short(sha), err)
	}
	defer os.RemoveAll(tmp)
	paths := splitPaths(pk)

	var files []plugind.File
	switch full, ok, err := s.cfg.DB.Snapshot(ctx, key, sha, ""); {
	case err != nil:
		return err
	case ok:
		files, err = s.unpack(ctx, full, filepath.Join(tmp, "full"))
		if plugind.CodeOf(err) == plugind.CodeDigestMismatch {
			// The stored whole was altered: drop it and start over, which
			// fetches it from upstream again (its record is gone now).
			if err := s.heal(ctx, full.Digest); err != nil {
				return err
			}
			return s.materialize(ctx, src, sha, pk)
		}
		if err != nil {
			return err
		}
	default:
		nb, over, err := s.cfg.DB.GetNegative(ctx, "full_budget", key, sha)
		if err != nil {
			return err
		}
		if !over {
			files, err = s.fetchUpstream(ctx, src, sha, nil, filepath.Join(tmp, "full"))
			if err == nil {
				if err := s.store(ctx, key, sha, "", files); err != nil {
					return err
				}
				s.keepMarketplaces(ctx, key, sha, files)
				if pk == "" {
					return nil
				}
				return s.store(ctx, key, sha, pk, subset(files, paths))
			}
			if !spoilsOnlySome(err) || pk == "" {
				return err
			}
			// Remember a refusal of the whole (over the budget, unsafe
			// somewhere), so other folders of this commit are not tried
			// whole again for a while; a submodule that could not be
			// fetched may be fetched next time.
			if code := plugind.CodeOf(err); code == plugind.CodeBudgetExceeded || code == plugind.CodeUnsafeArchive {
				if err := s.cfg.DB.PutNegative(ctx, meta.Negative{Kind: "full_budget", Repo: key, Key: sha,
					Code: string(code), Message: err.Error()}, s.cfg.NegativeTTL); err != nil {
					return err
				}
			}
		} else if pk == "" {
			return &plugind.Error{Code: plugind.Code(nb.Code), Msg: nb.Message}
		}
		// Over the budget as a whole: these folders alone, from upstream.
		files, err = s.fetchUpstream(ctx, src, sha, paths, filepath.Join(tmp, "part"))
		if err != nil {
			return err
		}
		return s.store(ctx, key, sha, pk, files)
	}
	return s.store(ctx, key, sha, pk, subset(files, paths))
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

// fetchUpstream writes paths of src at sha (nil: everything) into dest,
// proving the commit is on a branch or tag first: the mirror never stores a
// commit that only a fork network holds.
func (s *Server) fetchUpstream(ctx context.Context, src source.Source, sha string, paths []string, dest string) ([]plugind.File, error) {
	key := src.Key()
	fail := func(err error) ([]plugind.File, error) {
		s.remember(ctx, key, "fetch@"+sha, sha, err)
		return nil, err
	}
	r, err := s.open(src)
	if err != nil {
		return nil, err
	}
	got, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Paths: paths, Budget: s.cfg.Budget, Verify: true,
		Submodules: host.Submodules(s.openSubmodule, src, 1)})
	err = s.upstream("fetch", err)
	if err != nil {
		if plugind.CodeOf(err) == plugind.CodeBudgetExceeded || paths == nil && spoilsOnlySome(err) {
			// Not the answer for every folder of the commit: the caller
			// fetches those asked for alone.
			return nil, err
		}
		return fail(err)
	}
	if !got.Verified {
		if err := s.upstream("reachable", r.Reachable(ctx, sha, "")); err != nil {
			return fail(err)
		}
	}
	if err := s.cfg.DB.PutReachable(ctx, key, sha); err != nil {
		return nil, err
	}
	_, tree, err := plugind.TreeDigest(dest, s.cfg.Budget)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", key, host.Short(sha), err)
	}
	s.log.Info("fetched upstream", "repo", key, "sha", sha, "transport", got.Transport, "files", len(tree.Files), "bytes", tree.Bytes)
	return tree.Files, nil
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
// records it as holding pk of repo at sha.
func (s *Server) store(ctx context.Context, repo, sha, pk string, files []plugind.File) error {
	digest := plugind.DigestFiles(files)
	if o, ok, err := s.cfg.DB.GetObject(ctx, digest); err != nil {
		return err
	} else if ok {
		if have, err := s.cfg.Objects.Has(ctx, digest); err != nil {
			return err
		} else if have {
			return s.cfg.DB.PutSnapshot(ctx, repo, sha, pk, o)
		}
	}
	f, err := os.CreateTemp(s.cfg.TempDir, "reasonix-mirror-*.tar.gz")
	if err != nil {
		return fmt.Errorf("archive %s@%s: %w", repo, host.Short(sha), err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, sum, err := writeArchive(ctx, f, files)
	if err != nil {
		return fmt.Errorf("archive %s@%s: %w", repo, host.Short(sha), err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("archive %s@%s: %w", repo, host.Short(sha), err)
	}
	if err := s.cfg.Objects.Put(ctx, digest, f, size); err != nil {
		return err
	}
	o := meta.Object{Digest: digest, Size: size, ArchiveSHA256: sum, Files: len(files), Bytes: totalBytes(files)}
	return s.cfg.DB.PutSnapshot(ctx, repo, sha, pk, o)
}

// keepMarketplaces stores the marketplace documents at the root of a
// fetched tree by (repository, commit), for operators and for GET
// /v1/marketplace.
func (s *Server) keepMarketplaces(ctx context.Context, repo, sha string, files []plugind.File) {
	for _, f := range files {
		if _, ok := marketplace.DocumentAt(f.Path); !ok || f.Size > marketplace.MaxDocumentBytes {
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
