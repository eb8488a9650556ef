//go:build race

package peakrss

// raceBuild: this program is built with the race detector, whose shadow
// memory makes it a poor helper (see helperPath).
const raceBuild = true
