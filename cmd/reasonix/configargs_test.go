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
func TestWithConfigArgsPrintsWhatAStoredPlanKeeps(t *testing.T) {
	opt := func(key string, sensitive bool) installer.ConfigOption {
		return installer.ConfigOption{Option: manifest.Option{Key: key, Type: "string", Sensitive: sensitive}}
	}
	resp := &installer.Response{Actions: []installer.Action{
		{Name: "a", UserConfig: []installer.ConfigOption{opt("port", false), opt("token", true)}},
		{Name: "b", UserConfig: []installer.ConfigOption{opt("port", false), opt("token", false)}},
	}}
	approve := []string{"reasonix", "plugin", "install", "src", "--yes", "--plan-id", "ID"}
	for _, tc := range []struct {
		name   string
		config map[string]string
		want   []string
	}{
		{"none", nil, approve},
		{"plain", map[string]string{"port": "80"}, []string{"reasonix", "plugin", "install", "src", "--config", "port=80", "--yes", "--plan-id", "ID"}},
		{"sensitive somewhere", map[string]string{"token": "x"}, approve},
		{"one plugin's plain", map[string]string{"b.token": "x", "a.token": "y"}, []string{"reasonix", "plugin", "install", "src", "--config", "b.token=x", "--yes", "--plan-id", "ID"}},
		{"no such option", map[string]string{"nope": "1", "c.port": "2"}, approve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withConfigArgs(approve, installer.Request{Config: tc.config}, resp)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
