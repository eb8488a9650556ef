package main

import (
	"slices"
	"testing"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
)

// The approve command repeats exactly the values a stored plan keeps
// (installer.StoredConfig): non-sensitive ones that reach an option; a
// sensitive one, or one that reaches none, is never printed.
func TestConfigArgsPrintWhatAStoredPlanKeeps(t *testing.T) {
	opt := func(key string, sensitive bool) installer.ConfigOption {
		return installer.ConfigOption{Option: manifest.Option{Key: key, Type: "string", Sensitive: sensitive}}
	}
	resp := &installer.Response{Actions: []installer.Action{
		{Name: "a", UserConfig: []installer.ConfigOption{opt("port", false), opt("token", true)}},
		{Name: "b", UserConfig: []installer.ConfigOption{opt("port", false), opt("token", false)}},
	}}
	for _, tc := range []struct {
		name   string
		config map[string]string
		want   []string
	}{
		{"none", nil, nil},
		{"plain", map[string]string{"port": "80"}, []string{"--config", "port=80"}},
		{"sensitive somewhere", map[string]string{"token": "x"}, nil},
		{"one plugin's plain", map[string]string{"b.token": "x", "a.token": "y"}, []string{"--config", "b.token=x"}},
		{"no such option", map[string]string{"nope": "1", "c.port": "2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := configArgs(installer.Request{Config: tc.config}, resp)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// They go after the flags that shape the plan, before the approval.
	got := approveArgs("reasonix", parsed(t, "install", "src", "--replace", "--dry-run"), []string{"src"}, []string{"--config", "port=80"}, "ID")
	if want := "reasonix plugin install src --replace --config port=80 --yes --plan-id ID"; shellJoin(got) != want {
		t.Errorf("approve line %q, want %q", shellJoin(got), want)
	}
}
