package secrets

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		// URL userinfo.
		{"user and password", "https://user:pass@github.com/o/r", "https://***@github.com/o/r"},
		{"token as user", "https://ghp_0123456789abcdefghij@github.com/o/r.git", "https://***@github.com/o/r.git"},
		{"bare user", "https://git@example.com/x", "https://***@example.com/x"},
		{"quoted in an error", `source "https://user:tok@github.com/o/r" is an unpinned external reference`,
			`source "https://***@github.com/o/r" is an unpinned external reference`},
		{"at sign in password", "https://u:p@ss@host/x", "https://***@host/x"},
		{"other scheme", "git+https://u:p@host/x ssh://me:pw@h", "git+https://***@host/x ssh://***@h"},
		{"userinfo refs kept", "https://${USER}:${PASS}@host/x", "https://${USER}:${PASS}@host/x"},
		{"two urls", "a https://a:b@x b https://c:d@y", "a https://***@x b https://***@y"},
		// Query, fragment and assignment values.
		{"access_token", "https://h/p?access_token=abc&team=core", "https://h/p?access_token=***&team=***"},
		{"several keys", "https://h/p?apiKey=abc&X-Amz-Signature=ff00&page=2&sig=zz", "https://h/p?apiKey=***&X-Amz-Signature=***&page=***&sig=***"},
		{"key and password", "?key=AIzaSy&password=hunter2", "?key=***&password=***"},
		{"fragment", "https://h/cb#access_token=xyz&state=1", "https://h/cb#access_token=***&state=***"},
		{"token in a free query", "https://h/p?q=ghp_0123456789abcdefghij", "https://h/p?q=***"},
		{"assignment", "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz cmd", "ANTHROPIC_API_KEY=*** cmd"},
		{"flag=value", "run --password=hunter2 --name=x", "run --password=*** --name=x"},
		{"quoted value", `export TOKEN="a b c" && go`, `export TOKEN="***" && go`},
		{"single-quoted value", `PASSWORD='p w' x`, `PASSWORD='***' x`},
		{"session id", "SESSION_ID=123abc", "SESSION_ID=***"},
		{"reference kept", "https://h/p?token=${TOKEN}&key=$KEY&pwd=%PWD%", "https://h/p?token=${TOKEN}&key=$KEY&pwd=%PWD%"},
		{"expansion kept", "TOKEN=$(cat ~/.token) x", "TOKEN=$(cat ~/.token) x"},
		{"empty value", "https://h/p?token=&a=1", "https://h/p?token=&a=***"},
		{"boolean value", "https://h/p?private=true", "https://h/p?private=true"},
		// Headers.
		{"bearer header", `curl -H "Authorization: Bearer abc123" https://x`, `curl -H "Authorization: Bearer ***" https://x`},
		{"basic header", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"},
		{"token scheme", "authorization: token ghp_0123456789abcdefghij", "authorization: token ***"},
		{"no scheme", "Authorization: abcdef", "Authorization: ***"},
		{"proxy", "Proxy-Authorization: Basic Zm9vOmJhcg==", "Proxy-Authorization: Basic ***"},
		{"api key header", "-H 'X-Api-Key: k-123' -H 'Private-Token: abc'", "-H 'X-Api-Key: ***' -H 'Private-Token: ***'"},
		{"json member", `{"token": "abc def", "name": "x"}`, `{"token": "***", "name": "x"}`},
		{"json authorization", `{"Authorization":"Bearer abc.def"}`, `{"Authorization":"Bearer ***"}`},
		{"header reference kept", "Authorization: Bearer ${TOKEN}", "Authorization: Bearer ${TOKEN}"},
		{"header placeholder kept", "send it as Authorization: Bearer <token>", "send it as Authorization: Bearer <token>"},
		{"powershell hashtable", "@{Authorization='Bearer abc123'; Accept='json'}", "@{Authorization='Bearer ***'; Accept='json'}"},
		{"bare bearer", "got Bearer eyJhbGci.x9 back", "got Bearer *** back"},
		// Well-known tokens.
		{"ghp", "token ghp_0123456789abcdefghijABCDEFGHIJ0123 leaked", "token *** leaked"},
		{"github_pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "***"},
		{"glpat", "glpat-abcdefghij0123456789", "***"},
		{"sk", "sk-abcdefghijklmnop1234", "***"},
		{"sk long without digit", "sk-example-not-a-real-key", "***"},
		{"slack", "xoxb-123456789012-abcdefghij", "***"},
		{"aws", "id AKIAIOSFODNN7EXAMPLE.", "id ***."},
		{"google", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "***"},
		{"npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "***"},
		{"hugging face", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH1", "***"},
		{"jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_nature-x end", "jwt *** end"},
		{"stripe", "sk_live_0123456789abcdefXYZ", "***"},
		{"non-ASCII parameter", "https://h/p?q=日本", "https://h/p?q=***"},
		{"team mirror", "Authorization failed for rxm_q83vEjs_lw2dMbYvSdTgJq-0AbCdEfGhIjKlMnOpQrS.", "Authorization failed for ***."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Mask(tc.in)
			if got != tc.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if again := Mask(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

// TestMaskLeavesOrdinaryText lists text that must come out
// unchanged: prose, paths, ordinary URLs and names that merely contain a
// credential word; and what names no secret though it sits where one
// could: a reference, a boolean, an address (mailto:), an image digest.
func TestMaskLeavesOrdinaryText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"plain words: the token was not found; a bearer credential is needed",
		"token: unexpected end of input",
		"password: required",
		"git@github.com:owner/repo.git",
		"mail me at someone@example.com",
		"https://github.com/owner/repo/tree/main/plugins/x",
		"https://h/a@b/c", // an @ in the path is not userinfo
		"https://h/p#section-2",
		"https://h/p?#section-2",
		"is it a/b?",
		"a/b #comment=x", // a shell comment, not a fragment
		"TOKEN_FILE=/run/secrets/t PUBLIC_KEY=abc credential.helper=store author=me",
		"monkey=1 keyword=x keyboard=y",
		"if [ \"$a\" == \"$b\" ]; then x; fi; a!=b; c<=d",
		"sk-learn and task-runner and disk-sk-a",
		"npm_config_registry=https://registry.npmjs.org",
		"AKIA is a prefix, AKIAshort too",
		"ghp_short",
		"send it as Authorization: Bearer <token>",
		"every route needs `Authorization: Bearer",
		"Authorization: Basic\nnext line",
		"bearer tokens expire; Bearer xyz",
		"the syntax is NAME=VALUE",
		"C:\\Users\\me\\plugins",
		"plugins[3] \"fmt\": source \"./plugins/fmt\" is fine",
		"***",
		"https://***@host?token=***",
		"日本語のテキスト token：なし",
		"https://github.com/acme/tools?private=true",
		"https://github.com/acme/tools?token=${TOKEN}",
		"https://${USER}:${PASS}@github.com/acme/tools",
		"mailto:bob@example.com",
		"docker run ghcr.io/acme/img:1.0@sha256:0123abcd",
		"image:tag@sha256:0123abcd",
		"what now?yes", // no '/' before the '?': no URL
		"did you mean git:github.com/acme/tools?)",
		"npm:@scope/pkg",
	} {
		if got := Mask(s); got != s {
			t.Errorf("Mask(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestFindKindsAndNames(t *testing.T) {
	t.Parallel()
	s := `X=1 API_KEY=abc https://u:p@h/x?access_token=t0k -H "Authorization: Bearer zz9" ghp_0123456789abcdefghij`
	var got []string
	for _, sp := range find(s, display) {
		got = append(got, string(rune('0'+sp.Kind))+":"+sp.Name+":"+s[sp.Start:sp.End])
	}
	want := []string{
		"2:API_KEY:abc",
		"1::u:p",
		"2:access_token:t0k",
		"3:Authorization:zz9",
		"5:GITHUB_TOKEN:ghp_0123456789abcdefghij",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spans\n got %q\nwant %q", got, want)
	}
}

func TestIsName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"access_token", true}, {"apiKey", true}, {"api-key", true}, {"APIKey", true}, {"X-Amz-Signature", true},
		{"client_secret", true}, {"password", true}, {"GITHUB_PAT", true}, {"Authorization", true}, {"sig", true},
		{"ANTHROPIC_API_KEY", true}, {"SESSION_ID", true}, {"SECRET_KEY_BASE", true}, {"--password", true},
		{"password", true}, {"db-password", true}, {"PRIVATE_KEY", true}, {"Private-Token", true},
		{"author", false}, {"monkey", false}, {"keyword", false}, {"page", false}, {"lang", false}, {"team", false},
		{"token_type", false}, {"TOKEN_FILE", false}, {"credential.helper", false}, {"public_key", false},
		{"PUBLIC_KEY", false}, {"keyboard", false}, {"", false}, {"id", false},
	}
	for _, tc := range tests {
		if got := IsName(tc.name); got != tc.want {
			t.Errorf("IsName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWholeTokenAndReference(t *testing.T) {
	t.Parallel()
	// isToken: v as a whole is a well-known credential token.
	isToken := func(v string) bool {
		sp := find(v, display)
		return len(sp) == 1 && sp[0].Kind == Token && sp[0].Start == 0 && sp[0].End == len(v)
	}
	for v, want := range map[string]bool{
		"ghp_0123456789abcdefghij": true, "sk-abcdefghijklmnop1234": true, "AKIAIOSFODNN7EXAMPLE": true,
		"ghp_0123456789abcdefghij x": false, "x ghp_0123456789abcdefghij": false, "ghp_": false, "hello": false,
	} {
		if got := isToken(v); got != want {
			t.Errorf("token(%q) = %v, want %v", v, got, want)
		}
	}
	for v, want := range map[string]bool{
		"${TOKEN}": true, "$TOKEN": true, "%TOKEN%": true, "${env:TOKEN}": true, "$env:TOKEN": true,
		"Bearer ${TOKEN}": true, "${user_config.api_key}": true, "literal": false, "prefix-${X}-abc123": false,
		"": false, "100%": false,
	} {
		if got := IsReference(v); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", v, got, want)
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestMaskAttr(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: MaskAttr}))
	log.Warn("fetch https://u:hunter2@h/x failed",
		slog.String("source", "https://h/p?access_token=abc123"),
		slog.Any("err", errors.New("GET https://h/?sig=deadbeef: 404")),
		slog.Any("url", stringer("https://a:b@h")),
		slog.Group("g", slog.String("auth", "Authorization: Bearer zz9zz9")),
		slog.Int("n", 3),
		slog.String("plain", "nothing here"),
	)
	out := buf.String()
	for _, secret := range []string{"hunter2", "abc123", "deadbeef", "a:b@", "zz9zz9"} {
		if strings.Contains(out, secret) {
			t.Errorf("log line holds %q: %s", secret, out)
		}
	}
	for _, kept := range []string{`"n":3`, `"plain":"nothing here"`, `access_token=***`, `Bearer ***`} {
		if !strings.Contains(out, kept) {
			t.Errorf("log line lacks %q: %s", kept, out)
		}
	}
}

func BenchmarkMask(b *testing.B) {
	texts := []string{
		strings.Repeat("an ordinary warning about plugins/fmt/SKILL.md and its description; ", 20),
		`marketplace entry "x" (plugins[4]): source "https://user:tok@github.com/o/r?access_token=abc" is an unpinned external reference`,
	}
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			_ = Mask(s)
		}
	}
}

// FuzzMask checks the invariants on any text: the result holds
// nothing Find would still mask, redacting again changes nothing,
// and text without a credential comes back byte for byte.
func FuzzMask(f *testing.F) {
	for _, s := range []string{
		"https://user:pass@github.com/o/r?access_token=abc&x=1#sig=z",
		`curl -H "Authorization: Bearer abc123" 'X-Api-Key: k' ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz`,
		`{"token": "abc", "password":"p w"} Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.x AKIAIOSFODNN7EXAMPLE`,
		"plain text, nothing to see", "a=b=c==d", "https://@h", "Authorization:", "token=\"unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Mask(s)
		if sp := find(r, display); len(sp) != 0 {
			t.Fatalf("Mask(%q) = %q still holds %q", s, r, r[sp[0].Start:sp[0].End])
		}
		if len(find(s, display)) == 0 && r != s {
			t.Fatalf("Mask(%q) = %q changed text with no credential", s, r)
		}
	})
}

// TestFindIsLinear: every rule that reads ahead resumes after what it
// read, or caches it, so adversarial text costs in proportion to its
// length: a few hundred milliseconds for these ~250 KB texts, where a
// rule that read ahead again from every position took minutes.
func TestFindIsLinear(t *testing.T) {
	t.Parallel()
	for _, unit := range []string{"=a:", "(a:b@c", "'a:b@", "x://a'", "/?a=1&", "X-Api-Key:", "key=", "a:a", "Bearer 1"} {
		s := strings.Repeat(unit, 250_000/len(unit))
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			find(s, display)
			best = min(best, time.Since(start))
		}
		if best > 5*time.Second {
			t.Errorf("Find on %d bytes of %q took %v", len(s), unit, best)
		}
	}
}
