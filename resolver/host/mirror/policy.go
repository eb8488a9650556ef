package mirror

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

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
	return rule, nil
}

// MirrorOnly reports REASONIX_MIRROR_ONLY=1: nothing goes around the
// mirror, so neither may its policy when it cannot be read.
func (c *Client) MirrorOnly() bool { return c.cfg.Only }
