package server

import (
	"bytes"
	"strings"
	"testing"

	"reasonix.io/plugind/installer"
)

// nestedBody has objects, arrays and a map inside, to check keys at depth.
type nestedBody struct {
	Outer struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	} `json:"outer"`
	Labels map[string]any `json:"labels"`
	Embedded
}

type Embedded struct {
	Extra string `json:"extra"`
}

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		into       func() any
		// want is "" for success, else fragments the error must contain.
		want []string
	}{
		{"request", `{"source":"/x","name":"a","replace":true}`, req, nil},
		{"enabled", `{"name":"a","enabled":false}`, enabled, nil},
		{"nested", `{"outer":{"items":[{"key":"a"},{"key":"b"}]},"labels":{"a":1,"b":{"c":[1,{"d":2}]}},"extra":"x"}`, nested, nil},

		{"duplicate key", `{"source":"/x","source":"/y"}`, req, []string{`duplicate key "source"`}},
		{"duplicate via escape", `{"source":"/x","sour\u0063e":"/y"}`, req, []string{`duplicate key "source"`}},
		{"duplicate bool", `{"name":"a","enabled":true,"enabled":false}`, enabled, []string{`duplicate key "enabled"`}},
		{"duplicate in array element", `{"outer":{"items":[{"key":"a","key":"b"}]}}`, nested, []string{`duplicate key "outer.items[0].key"`}},
		{"duplicate in a map", `{"labels":{"a":1,"a":2}}`, nested, []string{`duplicate key "labels.a"`}},
		{"duplicate deep in a map", `{"labels":{"b":{"c":[{"d":1,"d":2}]}}}`, nested, []string{`duplicate key "labels.b.c[0].d"`}},
		{"duplicate embedded", `{"extra":"a","extra":"b"}`, nested, []string{`duplicate key "extra"`}},

		{"upper case", `{"SOURCE":"/x"}`, req, []string{`"SOURCE"`, `did you mean "source"`}},
		{"mixed case", `{"source":"/x","planid":"low:x"}`, req, []string{`"planid"`, `"planId"`}},
		{"title case", `{"Name":"a","enabled":true}`, enabled, []string{`"Name"`, `did you mean "name"`}},
		{"unicode fold", "{\"\u017fource\":\"/x\"}", req, []string{`did you mean "source"`}},
		{"kelvin", "{\"name\":\"a\",\"lin\u212a\":true}", req, []string{`did you mean "link"`}},
		{"case variant nested", `{"outer":{"ITEMS":[]}}`, nested, []string{`"outer.ITEMS"`, `"outer.items"`}},
		{"case twins in a map", `{"labels":{"k":1,"K":2}}`, nested, []string{`"labels.k" and "labels.K" differ only in case`}},
		{"both spellings", `{"source":"/x","Source":"/y"}`, req, []string{`differ only in case`}},
		{"case twins in a big map", `{"labels":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"s":1,"` + "\u017f" + `":2}}`, nested, []string{`"labels.s" and "labels.ſ" differ only in case`}},

		{"unknown field", `{"source":"/x","force":true}`, req, []string{`unknown field "force"`}},
		{"empty", " \n", req, []string{"empty body"}},
		{"two values", `{"source":"/x"} {"source":"/y"}`, req, []string{"more than one JSON value"}},
		{"trailing garbage", `{"source":"/x"} ]`, req, []string{"more than one JSON value"}},
		{"array", `[]`, req, []string{"cannot unmarshal"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := decodeStrict([]byte(c.body), c.into())
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %s", c.body)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func req() any    { return &installBody{} }
func nested() any { return &nestedBody{} }
func enabled() any {
	return &struct {
		Name    string `json:"name"`
		Enabled *bool  `json:"enabled"`
	}{}
}

// TestDaemonRefusesAmbiguousBodies (issue 9, finding 12): through the HTTP
// API, duplicate and case-variant keys are a 400 naming the key, on every
// route that reads a body, and nothing is written.
func TestDaemonRefusesAmbiguousBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "amb", "1.0.0")
	plan := e.plan(installer.Request{Source: mustSource(src)})
	if r := e.installByPlanID(plan.PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	other := plugin(t, t.TempDir(), "other", "1.0.0")
	before := e.registryBytes()
	cases := []struct {
		name, path, body, key string
	}{
		{"plan duplicate source", "/plugins/plan", `{"source":"` + other + `","source":"/elsewhere"}`, `"source"`},
		{"plan upper-case source", "/plugins/plan", `{"SOURCE":"` + other + `"}`, `"SOURCE"`},
		{"plan case twins", "/plugins/plan", `{"source":"` + other + `","Replace":true}`, `"Replace"`},
		{"install duplicate planId", "/plugins/install", `{"planId":"` + plan.PlanID + `","planId":"low:sha256:00"}`, `"planId"`},
		{"install lower-case planid", "/plugins/install", `{"planid":"` + plan.PlanID + `"}`, `"planid"`},
		{"enabled duplicate", "/plugins/enabled", `{"name":"amb","enabled":true,"enabled":false}`, `"enabled"`},
		{"enabled title case", "/plugins/enabled", `{"Name":"amb","enabled":false}`, `"Name"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", c.path, c.body, nil)
			r.wantError(t, 400, CodeBadRequest)
			if msg, _ := r.json(t)["error"].(string); !strings.Contains(msg, c.key) {
				t.Fatalf("error %q does not name %s", msg, c.key)
			}
		})
	}
	if !bytes.Equal(before, e.registryBytes()) {
		t.Fatal("a refused request changed the registry")
	}
	// The same bodies, written once and exactly, are accepted.
	r := e.do("POST", "/plugins/enabled", `{"name":"amb","enabled":false}`, nil)
	if r.status != 200 {
		t.Fatalf("a well-formed body was refused: %s", r.body)
	}
}
