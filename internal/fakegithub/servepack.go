package fakegithub

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ServePack makes every upload-pack request on the repository answered
// with pack, byte for byte, instead of what git would send: a pack crafted
// to cost its reader (see BuildPack). Refs still come from the repository,
// so a pack a client should accept holds the commit a branch points at (see
// ServeCraftedPack). Wants are checked as usual first. The answer is
// protocol v0's, as upload-pack gives it: for a depth-limited request a
// shallow line per want and a flush, then NAK, then (once the request says
// "done") the pack, in side-band frames when the request asked for them.
// nil restores git's answers.
func (r *Repo) ServePack(pack []byte) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if pack == nil {
		delete(r.s.craftedPack, pathKey(r.path))
		return
	}
	r.s.craftedPack[pathKey(r.path)] = pack
}

// ServeCraftedPack serves (as ServePack) one pack holding commit sha with
// every tree and blob it reaches, followed by extra.
func (r *Repo) ServeCraftedPack(sha string, extra []PackObject) {
	r.s.helper()
	objects, err := r.packObjectsOf(sha)
	if err == nil {
		var pack []byte
		if pack, err = BuildPack(append(objects, extra...)); err == nil {
			r.ServePack(pack)
			return
		}
	}
	r.s.fail(fmt.Errorf("%s: crafted pack of %s: %w", r.path, sha, err))
}

// packObjectsOf returns commit sha and every tree and blob it reaches, as
// whole objects.
func (r *Repo) packObjectsOf(sha string) ([]PackObject, error) {
	if !isHex40(sha) {
		return nil, fmt.Errorf("%q is not a 40-hex commit id", sha)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	list, err := r.s.runGit(ctx, r.gitDir, nil, "rev-list", "--objects", "--no-walk", sha)
	if err != nil {
		return nil, err
	}
	var ids bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		id, _, _ := strings.Cut(line, " ")
		ids.WriteString(id + "\n")
	}
	out, err := r.s.runGit(ctx, r.gitDir, &ids, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	var objects []PackObject
	for len(out) > 0 {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		fields := strings.Fields(string(header))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("cat-file --batch: unexpected header %q", header)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil || size+1 > len(rest) {
			return nil, fmt.Errorf("cat-file --batch: header %q: bad size", header)
		}
		objects = append(objects, PackObject{Type: fields[1], Data: rest[:size]})
		out = rest[size+1:]
	}
	return objects, nil
}

// craftedPackOf returns what ServePack set for repo, or nil.
func (s *Server) craftedPackOf(repo *Repo) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.craftedPack[pathKey(repo.path)]
}

// writeCraftedPack answers the upload-pack request body with pack.
func writeCraftedPack(w http.ResponseWriter, body, pack []byte) {
	var wants []string
	var caps string
	deepen, done := false, false
	for _, line := range pktLines(body) {
		switch {
		case strings.HasPrefix(line, "want ") && len(line) >= 45:
			if wants == nil {
				caps = line[45:]
			}
			wants = append(wants, line[5:45])
		case strings.HasPrefix(line, "deepen"):
			deepen = true
		case line == "done":
			done = true
		}
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	w.Header().Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	w.WriteHeader(http.StatusOK)
	var out bytes.Buffer
	if deepen {
		for _, want := range wants {
			writePkt(&out, []byte("shallow "+want+"\n"))
		}
		out.WriteString("0000")
	}
	if !done {
		// A negotiation round without haves (git's first request): the
		// shallow list is the whole answer.
		_, _ = w.Write(out.Bytes())
		return
	}
	writePkt(&out, []byte("NAK\n"))
	if _, err := w.Write(out.Bytes()); err != nil {
		return
	}
	frame := 0 // no side-band: the pack follows raw
	switch fields := strings.Fields(caps); {
	case slices.Contains(fields, "side-band-64k"):
		frame = 65520 - 5
	case slices.Contains(fields, "side-band"):
		frame = 1000 - 5
	}
	if frame == 0 {
		_, _ = w.Write(pack)
		return
	}
	for len(pack) > 0 {
		n := min(len(pack), frame)
		out.Reset()
		writePkt(&out, append([]byte{1}, pack[:n]...)) // band 1: pack data
		if _, err := w.Write(out.Bytes()); err != nil {
			return
		}
		pack = pack[n:]
	}
	_, _ = w.Write([]byte("0000"))
}

func writePkt(out *bytes.Buffer, data []byte) {
	fmt.Fprintf(out, "%04x", len(data)+4)
	out.Write(data)
}
