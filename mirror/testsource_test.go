package mirror_test

import "reasonix.io/plugind/source"

// testSource is a source a test names, parsed as the CLI and the daemon
// parse one (source.FromText); a test that names a bad one is itself wrong.
func testSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
