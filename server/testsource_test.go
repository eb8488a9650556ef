package server

import "reasonix.io/plugind/source"

// testSource is a source a test names, parsed as the CLI and the daemon
// parse one (source.Source.UnmarshalText); a test that names a bad one is
// itself wrong.
func testSource(text string) source.Source {
	var s source.Source
	if err := s.UnmarshalText([]byte(text)); err != nil {
		panic(err)
	}
	return s
}
