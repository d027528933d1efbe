//go:build !linux

package iotest

import "os"

// rawFile is os.File's ReadAt and WriteAt outside Linux.
type rawFile struct{ *os.File }

func newRawFile(f *os.File) rawFile { return rawFile{f} }
