// Package tarball extracts tar.gz and zip archives into a fresh staging
// directory, refusing anything that could escape it or blow the snapshot
// budgets (SPEC §6, §8). Its Writer is also what the git host writes a
// commit's tree through, so a commit gets one verdict and one digest
// whichever transport brought it.
//
// Extraction is streaming: archive bytes flow through one fixed buffer into
// the files being written, so memory stays flat whatever the archive size.
// Only regular files and directories are ever created. Once every entry has
// been read, Finish fetches the submodules the kept folders hold (through
// Options.Submodules, into their folders) and then materializes the links:
// a link to a file as a copy of it, a link to a folder as a copy of the
// folder's files, so a link may name a target that appears later in the
// archive, or inside a submodule.
package tarball
