package installer

import (
	"context"

	"reasonix.io/plugind/source"
)

// InstalledPins implements maintain.Home: local folders and zips have no
// snapshot to keep.
func (in *Installer) InstalledPins(ctx context.Context) ([]source.Source, error) {
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	var pins []source.Source
	for _, e := range reg.Plugins {
		if e.Commit == "" || !e.Source.IsRemote() {
			continue
		}
		pins = append(pins, e.Source.Beside(e.Subdir).At(e.Commit))
	}
	return pins, nil
}
