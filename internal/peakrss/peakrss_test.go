package peakrss

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	Serve()
	os.Exit(m.Run())
}

// TestRunMeasuresTheCommandNotItsParent: a command run from a process
// holding 256 MiB reports its own few MiB, where os/exec's rusage reports
// the parent's; output, environment, working folder and exit codes pass
// through.
func TestRunMeasuresTheCommandNotItsParent(t *testing.T) {
	ballast := bytes.Repeat([]byte{1}, 256<<20) // resident: every page written
	ctx := context.Background()

	plain := exec.Command("true")
	if err := plain.Run(); err != nil {
		t.Fatal(err)
	}
	u, err := Run(ctx, exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS <= 0 || u.PeakRSS > 16<<20 { // true is 2-4 MiB, race-built caller or not
		t.Errorf("true peaked at %d bytes, want its own few MiB", u.PeakRSS)
	}
	t.Logf("true: %.1f MiB through Run; os/exec's rusage says %d KiB", float64(u.PeakRSS)/(1<<20), plain.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)

	dir := t.TempDir()
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", `pwd; echo "$PEAKRSS_PROBE"; test -z "$PEAKRSS_HELPER"; exit 3`)
	cmd.Env = append(os.Environ(), "PEAKRSS_PROBE=through")
	cmd.Dir, cmd.Stdout = dir, &out
	_, err = Run(ctx, cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit: %v, want code 3", err)
	}
	if got := strings.Fields(out.String()); len(got) != 2 || got[0] != dir || got[1] != "through" {
		t.Errorf("output %q", out.String())
	}
	if _, err := Run(ctx, exec.Command("/nonexistent/command")); err == nil {
		t.Error("a command that cannot start: no error")
	}
	_ = ballast[len(ballast)-1]
}
