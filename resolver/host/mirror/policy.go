package mirror

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/renameio/v2"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/policy"
)

// PolicyResponse is GET /v1/policy's answer: what of the operator's
// policy the client applies itself (SPEC §15, §17).
type PolicyResponse struct {
	// Runtime is the rule for code plugins fetch at run time: "allow" or
	// "block-unpinned" (policy.Runtime).
	Runtime string `json:"runtime"`
}

// policyTTL is how long a client keeps the rule it read: a plan asks at
// most once, and a daemon sees an operator's change within a minute.
const policyTTL = time.Minute

// policyCache is the rule last read, and when.
type policyCache struct {
	mu   sync.Mutex
	rule policy.Runtime
	at   time.Time
}

// RuntimePolicy reads the mirror's rule for run-time fetches, failing over
// across replicas as every request does. A rule this client does not know
// is an error (a newer mirror's stricter rule must not read as "allow"),
// and so is a refused token.
func (c *Client) RuntimePolicy(ctx context.Context) (policy.Runtime, error) {
	c.policy.mu.Lock()
	defer c.policy.mu.Unlock()
	if c.policy.rule != "" && time.Since(c.policy.at) < policyTTL {
		return c.policy.rule, nil
	}
	var rule policy.Runtime
	r := &Repo{c: c}
	err := r.do(ctx, "reading the team mirror's policy", "/v1/policy", url.Values{}, nil, []int{http.StatusOK}, func(resp *http.Response, base string) error {
		var ans PolicyResponse
		if err := decode(resp, base, &ans); err != nil {
			return err
		}
		var err error
		if rule, err = policy.ParseRuntime(ans.Runtime); err != nil {
			return plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s sets a runtime policy this Reasonix does not know: %v (update Reasonix)", base, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	c.policy.rule, c.policy.at = rule, time.Now()
	c.remember(rule, c.policy.at)
	return rule, nil
}

// rememberedPolicy is PolicyFile: the rule, when it was read, and from
// which replicas (another mirror's rule is not this one's).
type rememberedPolicy struct {
	Runtime string    `json:"runtime"`
	ReadAt  time.Time `json:"readAt"`
	Mirror  []string  `json:"mirror"`
}

// remember writes the rule read to PolicyFile when it changed (or was
// never written): a failure costs an offline plan the rule, nothing more.
func (c *Client) remember(rule policy.Runtime, at time.Time) {
	if c.cfg.PolicyFile == "" {
		return
	}
	if was, _, ok := c.RememberedPolicy(); ok && was == rule {
		return
	}
	data, err := json.Marshal(rememberedPolicy{Runtime: string(rule), ReadAt: at.UTC().Truncate(time.Second), Mirror: c.cfg.URLs})
	if err == nil {
		err = os.MkdirAll(filepath.Dir(c.cfg.PolicyFile), 0o700)
	}
	if err == nil {
		err = renameio.WriteFile(c.cfg.PolicyFile, data, plugind.PrivateFileMode)
	}
	if err != nil {
		c.cfg.Log.Debug("team mirror: the runtime policy was not remembered", "file", c.cfg.PolicyFile, "err", err)
	}
}

// RememberedPolicy is the runtime rule this home last read from this
// mirror (the same replicas), and when; ok is false when there is none.
func (c *Client) RememberedPolicy() (rule policy.Runtime, readAt time.Time, ok bool) {
	if c.cfg.PolicyFile == "" {
		return "", time.Time{}, false
	}
	data, err := os.ReadFile(c.cfg.PolicyFile)
	if err != nil {
		return "", time.Time{}, false
	}
	var r rememberedPolicy
	if err := json.Unmarshal(data, &r); err != nil || !slices.Equal(r.Mirror, c.cfg.URLs) {
		return "", time.Time{}, false
	}
	if rule, err = policy.ParseRuntime(r.Runtime); err != nil {
		return "", time.Time{}, false
	}
	return rule, r.ReadAt, true
}

// MirrorOnly reports REASONIX_MIRROR_ONLY=1: nothing goes around the
// mirror, so neither may its policy when it cannot be read.
func (c *Client) MirrorOnly() bool { return c.cfg.Only }
