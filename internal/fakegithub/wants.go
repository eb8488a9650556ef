package fakegithub

import (
	"context"
	"strconv"
	"strings"
)

// wantPolicy is which objects upload-pack serves by SHA.
type wantPolicy int

const (
	wantReachable wantPolicy = iota // commits reachable from a branch or tag (the default)
	wantTips                        // advertised ref tips only (RefuseSHAWants)
	wantAny                         // any object in the store (ServeUnreachableWants)
)

// refusedWant returns the first want of an upload-pack request that policy
// refuses, or "". git's own checks cannot be relied on: upload-pack applies
// allow*SHA1InWant to protocol v0 only and serves protocol v2 wants of any
// object it has, so the fake checks every request itself, the way git's v0
// code does: a want that is not a tip must be a commit (no bare trees or
// blobs) that some branch or tag reaches.
func (r *Repo) refusedWant(ctx context.Context, body []byte, policy wantPolicy) (string, error) {
	wants := pktWants(body)
	if len(wants) == 0 || policy == wantAny {
		return "", nil
	}
	refs, err := r.refs(ctx)
	if err != nil {
		return "", err
	}
	tips := map[string]bool{}
	for _, q := range refs {
		tips[q.object] = true
		tips[q.commit] = true
	}
	var others []string
	for _, w := range wants {
		if !tips[w] {
			others = append(others, w)
		}
	}
	if len(others) == 0 {
		return "", nil
	}
	if policy == wantTips {
		return others[0], nil
	}
	// One cat-file for the types (a missing object is "missing"), one
	// rev-list for reachability: it prints each wanted commit that no
	// branch or tag reaches.
	out, err := r.s.runGit(ctx, r.gitDir, strings.NewReader(strings.Join(others, "\n")+"\n"),
		"cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return "", err
	}
	types := strings.Fields(string(out))
	for i, w := range others {
		if i >= len(types) || types[i] != "commit" {
			return w, nil
		}
	}
	args := append(append([]string{"rev-list"}, others...), "--not", "--branches", "--tags")
	out, err = r.s.runGit(ctx, r.gitDir, nil, args...)
	if err != nil {
		return "", err
	}
	unreachable := map[string]bool{}
	for _, sha := range strings.Fields(string(out)) {
		unreachable[sha] = true
	}
	for _, w := range others {
		if unreachable[w] {
			return w, nil
		}
	}
	return "", nil
}

// pktWants extracts the object ids of "want <oid>" pkt-lines (protocol v0
// and v2 use the same line).
func pktWants(body []byte) []string {
	var out []string
	for _, line := range pktLines(body) {
		if strings.HasPrefix(line, "want ") && len(line) >= 45 && isHex40(line[5:45]) {
			out = append(out, line[5:45])
		}
	}
	return out
}

// pktLines returns the data pkt-lines of body, without their newline,
// skipping flush, delim and response-end packets and stopping at the first
// malformed length.
func pktLines(body []byte) []string {
	var out []string
	for len(body) >= 4 {
		n, err := strconv.ParseUint(string(body[:4]), 16, 16)
		if err != nil {
			break
		}
		if n < 4 { // flush, delim, response-end
			body = body[4:]
			continue
		}
		if int(n) > len(body) {
			break
		}
		out = append(out, strings.TrimSuffix(string(body[4:n]), "\n"))
		body = body[n:]
	}
	return out
}
