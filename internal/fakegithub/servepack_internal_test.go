package fakegithub

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
)

// TestWriteCraftedPack: the answer upload-pack would give, for each way a
// v0 request can ask: a shallow list only when deepened, nothing but it
// before "done", and the pack raw or in the side-band the request named.
func TestWriteCraftedPack(t *testing.T) {
	t.Parallel()
	a := strings.Repeat("a", 40)
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	pack := bytes.Repeat([]byte("PACKDATA"), 20000) // 160,000 bytes: several 64k frames
	shallow := pkt("shallow "+a+"\n") + "0000"
	nak := pkt("NAK\n")
	tests := []struct {
		name, body string
		head       string // what precedes the pack
		band       string // "" when the pack follows raw
		noPack     bool
	}{
		{"raw, deepened", pkt("want "+a+" ofs-delta\n") + pkt("deepen 1\n") + "0000" + pkt("done\n"), shallow + nak, "", false},
		{"raw, whole history", pkt("want "+a+"\n") + "0000" + pkt("done\n"), nak, "", false},
		{"side-band-64k", pkt("want "+a+" side-band-64k ofs-delta\n") + pkt("deepen 1\n") + "0000" + pkt("done\n"), shallow + nak, "side-band-64k", false},
		{"side-band", pkt("want "+a+" side-band\n") + "0000" + pkt("done\n"), nak, "side-band", false},
		{"negotiation round", pkt("want "+a+" side-band-64k\n") + pkt("deepen 1\n") + "0000", shallow, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeCraftedPack(rec, []byte(tt.body), pack)
			if ct := rec.Header().Get("Content-Type"); ct != "application/x-git-upload-pack-result" {
				t.Errorf("Content-Type %q", ct)
			}
			out := rec.Body.Bytes()
			if !bytes.HasPrefix(out, []byte(tt.head)) {
				t.Fatalf("answer starts %q, want %q", out[:min(len(out), 80)], tt.head)
			}
			rest := out[len(tt.head):]
			switch {
			case tt.noPack:
				if len(rest) != 0 {
					t.Fatalf("%d bytes after the shallow list of a negotiation round", len(rest))
				}
			case tt.band == "":
				if !bytes.Equal(rest, pack) {
					t.Fatalf("raw pack of %d bytes, want %d", len(rest), len(pack))
				}
			default:
				typ := sideband.Sideband
				if tt.band == "side-band-64k" {
					typ = sideband.Sideband64k
				}
				got, err := io.ReadAll(sideband.NewDemuxer(typ, bytes.NewReader(rest)))
				if err != nil || !bytes.Equal(got, pack) {
					t.Fatalf("demuxed %d bytes (%v), want %d", len(got), err, len(pack))
				}
			}
		})
	}
}
