package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func loadUserConfigFixture(t *testing.T) *Package {
	t.Helper()
	pkg, err := Load("testdata/claude-userconfig", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestReadOptions(t *testing.T) {
	pkg := loadUserConfigFixture(t)
	var got []string
	for _, o := range pkg.UserConfig {
		got = append(got, o.Key)
	}
	if want := []string{"api_key", "endpoint", "port", "verbose", "workdir", "tags"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v (declaration order)", got, want)
	}
	key, _ := FindOption(pkg.UserConfig, "api_key")
	if !key.Required || !key.Sensitive || key.Type != OptionString || key.Title != "API key" || key.Description == "" {
		t.Errorf("api_key read as %+v", key)
	}
	port, _ := FindOption(pkg.UserConfig, "port")
	if port.Default == nil || port.Default.Text() != "8080" || *port.Min != 1 || *port.Max != 65535 {
		t.Errorf("port read as %+v", port)
	}
	tags, _ := FindOption(pkg.UserConfig, "tags")
	if !tags.Multiple || tags.Default.Text() != "a,b" {
		t.Errorf("tags read as %+v", tags)
	}
	// Reading options is not "unsupported": the plugin is not partial for it.
	for _, w := range pkg.Warnings {
		if strings.Contains(w, "userConfig is not supported") {
			t.Errorf("warning %q", w)
		}
	}
	var undeclared bool
	for _, w := range pkg.Warnings {
		undeclared = undeclared || strings.Contains(w, "${user_config.nope} is referenced, but userConfig declares no option")
	}
	if !undeclared {
		t.Errorf("no warning about the undeclared ${user_config.nope}: %q", pkg.Warnings)
	}
	if got, want := pkg.UserConfigRefs(), []string{"api_key", "endpoint", "nope", "port", "tags", "verbose", "workdir"}; !reflect.DeepEqual(got, want) {
		t.Errorf("refs %v, want %v", got, want)
	}
}

func TestOptionParse(t *testing.T) {
	num := func(min, max float64) Option {
		return Option{Key: "port", Title: "Port", Type: OptionNumber, Min: &min, Max: &max}
	}
	cases := []struct {
		name    string
		opt     Option
		text    string
		want    string // Text() of the value
		wantErr string
	}{
		{"string", Option{Key: "s", Type: OptionString}, "  hello  ", "hello", ""},
		{"first line only", Option{Key: "s", Type: OptionString}, "two\nlines", "two", ""},
		{"first line, CRLF", Option{Key: "s", Type: OptionString}, "one\r\ntwo", "one", ""},
		{"empty", Option{Key: "s", Title: "S", Type: OptionString}, "   ", "", `option s ("S"): the value is empty`},
		{"number", num(1, 65535), "8081", "8081", ""},
		{"number with fraction", num(0, 10), "2.5", "2.5", ""},
		{"number exponent", num(0, 1e6), "1e3", "1000", ""},
		{"not a number", num(1, 10), "abc", "", `option port ("Port"): "abc" is not a number`},
		{"NaN refused", num(1, 10), "NaN", "", "is not a number"},
		{"hex, as JavaScript's Number()", num(0, 100), "0x10", "16", ""},
		{"binary", num(0, 100), "0b101", "5", ""},
		{"no signed hex", num(-100, 100), "-0x10", "", "is not a number"},
		{"leading dot", num(0, 1), ".5", "0.5", ""},
		{"no underscores", num(0, 1e6), "1_000", "", "is not a number"},
		{"no hex float", num(0, 1e6), "0x1p4", "", "is not a number"},
		{"Inf refused", num(1, 10), "Inf", "", "is not a number"},
		{"below min", num(1, 10), "0", "", `option port ("Port") must be at least 1`},
		{"above max", num(1, 65535), "99999", "", "must be at most 65535"},
		{"boolean yes", Option{Key: "b", Type: OptionBoolean}, "YES", "true", ""},
		{"boolean off", Option{Key: "b", Type: OptionBoolean}, "off", "false", ""},
		{"boolean 1", Option{Key: "b", Type: OptionBoolean}, "1", "true", ""},
		{"not a boolean", Option{Key: "b", Type: OptionBoolean}, "maybe", "", `"maybe" is not a boolean (use true/false, 1/0, yes/no, on/off)`},
		{"directory not checked on disk", Option{Key: "d", Type: OptionDirectory}, "/no/such/dir", "/no/such/dir", ""},
		{"file", Option{Key: "f", Type: OptionFile}, "./x.pem", "./x.pem", ""},
		{"sensitive number never echoed", Option{Key: "pin", Type: OptionNumber, Sensitive: true}, "s3cr3t", "", "option pin: the value is not a number"},
		{"sensitive boolean never echoed", Option{Key: "k", Type: OptionBoolean, Sensitive: true}, "s3cr3t", "", "option k: the value is not a boolean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := c.opt.Parse(c.text)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				if c.opt.Sensitive && strings.Contains(err.Error(), c.text) {
					t.Fatalf("a sensitive value is quoted: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Text() != c.want {
				t.Fatalf("value %q, want %q", v.Text(), c.want)
			}
		})
	}
}

func TestOptionCheck(t *testing.T) {
	cases := []struct {
		opt     Option
		value   string // JSON
		wantErr string
	}{
		{Option{Key: "n", Type: OptionNumber}, `"8080"`, "must be a number, not a string"},
		{Option{Key: "b", Type: OptionBoolean}, `1`, "must be a boolean, not a number"},
		{Option{Key: "s", Type: OptionString}, `["a"]`, "does not allow multiple values"},
		{Option{Key: "s", Type: OptionString, Multiple: true}, `["a","b"]`, ""},
		{Option{Key: "d", Type: OptionDirectory}, `true`, "must be a string, not a boolean"},
		{Option{Key: "d", Type: OptionDirectory}, `["a"]`, "must be a path, not a list"},
		{Option{Key: "s", Type: OptionString}, `"x"`, ""},
	}
	for _, c := range cases {
		var v Value
		if err := json.Unmarshal([]byte(c.value), &v); err != nil {
			t.Fatal(err)
		}
		err := c.opt.Check(v)
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s %s: err %v, want %q", c.opt.Type, c.value, err, c.wantErr)
		}
	}
	var v Value
	if err := json.Unmarshal([]byte(`{"a":1}`), &v); err == nil {
		t.Error("an object was read as a value")
	}
}

func TestValueJSONAndText(t *testing.T) {
	cases := []struct{ json, text string }{
		{`"x"`, "x"}, {`8080`, "8080"}, {`2.5`, "2.5"}, {`true`, "true"}, {`false`, "false"},
		{`["a","b"]`, "a,b"}, {`1e21`, "1e+21"}, {`1.5e-7`, "1.5e-7"}, {`0`, "0"}, {`-3`, "-3"},
	}
	for _, c := range cases {
		var v Value
		if err := json.Unmarshal([]byte(c.json), &v); err != nil {
			t.Fatal(err)
		}
		if v.Text() != c.text {
			t.Errorf("%s: text %q, want %q", c.json, v.Text(), c.text)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(out, &back); err != nil || !back.Equal(v) {
			t.Errorf("%s: round trip %s gives %v (%v)", c.json, out, back, err)
		}
	}
}

func TestOptionTextsAndEnv(t *testing.T) {
	pkg := loadUserConfigFixture(t)
	set := map[string]Value{"api_key": StringValue("s3cr3t"), "endpoint": StringValue("https://svc.example")}
	shown := OptionTexts(pkg.UserConfig, set, false)
	want := map[string]string{"endpoint": "https://svc.example", "port": "8080", "verbose": "", "workdir": "", "tags": "a,b"}
	if !reflect.DeepEqual(shown, want) {
		t.Errorf("shown texts %v, want %v", shown, want)
	}
	all := OptionTexts(pkg.UserConfig, set, true)
	if all["api_key"] != "s3cr3t" {
		t.Errorf("with sensitive: %v", all)
	}
	// A required option with no value and no default keeps its placeholder.
	if _, ok := OptionTexts(pkg.UserConfig, nil, true)["endpoint"]; ok {
		t.Error("a required option without a value expands")
	}
	env := OptionEnv(map[string]string{"api_key": "k", "my.opt": "v"})
	if want := []string{"CLAUDE_PLUGIN_OPTION_API_KEY=k", "CLAUDE_PLUGIN_OPTION_MY_OPT=v"}; !reflect.DeepEqual(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	if got := ExpandUserConfig("a ${user_config.x} b ${user_config.y} ${other}", map[string]string{"x": "1"}); got != "a 1 b ${user_config.y} ${other}" {
		t.Errorf("expand: %q", got)
	}
}

func TestWithUserConfig(t *testing.T) {
	pkg := loadUserConfigFixture(t)
	before, _ := json.Marshal(pkg)
	set := map[string]Value{"api_key": StringValue("s3cr3t-value"), "endpoint": StringValue("https://svc.example"), "workdir": StringValue("/srv/work")}
	got := pkg.WithUserConfig(OptionTexts(pkg.UserConfig, set, false))
	after, _ := json.Marshal(pkg)
	if string(before) != string(after) {
		t.Fatal("WithUserConfig changed the package it was called on (a cache shares it)")
	}
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), "s3cr3t-value") {
		t.Fatalf("a sensitive value is shown: %s", out)
	}
	svc, remote := got.MCPServers[0], got.MCPServers[1]
	if want := []string{"server.js", "--port", "8080", "--dir", "/srv/work", "--tags=a,b"}; !reflect.DeepEqual(svc.Args, want) {
		t.Errorf("args %v, want %v", svc.Args, want)
	}
	if svc.Env["ENDPOINT"] != "https://svc.example" || svc.Env["API_KEY"] != "${user_config.api_key}" || svc.Env["VERBOSE"] != "" {
		t.Errorf("env %v", svc.Env)
	}
	if remote.URL != "https://svc.example/mcp" || remote.Headers["Authorization"] != "Bearer ${user_config.api_key}" || remote.Headers["X-Port"] != "8080" {
		t.Errorf("remote %+v", remote)
	}
	if h := got.Hooks[0]; h.Command != "echo start https://svc.example ${user_config.api_key}" {
		t.Errorf("shell hook %q", h.Command)
	}
	if h := got.Hooks[1]; !reflect.DeepEqual(h.Args, []string{"--endpoint", "https://svc.example"}) || h.Env["PORT"] != "8080" || h.Env["UNDECLARED"] != "${user_config.nope}" {
		t.Errorf("exec hook %+v", h)
	}
	if l := got.LSPServers[0]; !reflect.DeepEqual(l.Args, []string{"--root", "/srv/work"}) {
		t.Errorf("lsp %+v", l)
	}
	// A credential-looking value the user gave is masked where shown, as
	// any credential in a launch line is.
	leaky := pkg.WithUserConfig(OptionTexts(pkg.UserConfig, map[string]Value{"endpoint": StringValue("https://user:hunter2@svc.example")}, false))
	if b, _ := json.Marshal(leaky); strings.Contains(string(b), "hunter2") {
		t.Errorf("URL credentials of a value are shown: %s", b)
	}
	// Nothing referenced: the same package back.
	plain, err := Load("testdata/claude", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.WithUserConfig(map[string]string{"x": "1"}) != plain {
		t.Error("a package without references was copied")
	}
}
