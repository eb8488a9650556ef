// Package tarball extracts tar.gz and zip archives into a fresh staging
// directory, refusing anything that could escape it or blow the snapshot
// budgets (SPEC §6, §8).
//
// Extraction is streaming: archive bytes flow through one fixed buffer into
// the files being written, so memory stays flat whatever the archive size.
// Only regular files and directories are ever created. Links inside the
// archive are materialized as regular files after every regular file has been
// written, so nothing on disk can point outside the tree and a link may name a
// target that appears later in the archive.
package tarball
