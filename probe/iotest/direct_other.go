//go:build !linux

package iotest

import (
	"errors"
	"os"
)

// errDirectRefused says the system does not do O_DIRECT: outside Linux
// the probe always reads through the page cache.
var errDirectRefused = errors.New("O_DIRECT is only used on Linux")

func openDirect(string) (*os.File, error) { return nil, errDirectRefused }

func isEINVAL(error) bool { return false }

func memoryFS(*os.File) (string, bool) { return "", false }

func freeSpace(string) (int64, bool) { return 0, false }

func dropCache(*os.File) {}

func adviseRandom(*os.File) {}

func openWriter(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }

func allocatedBytes(os.FileInfo) (int64, bool) { return 0, false }
