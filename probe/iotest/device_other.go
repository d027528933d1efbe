//go:build !linux

package iotest

import "os"

// DescribePath describes the storage behind path. Outside Linux there is
// no sysfs to read: the device stays unknown and only the kind is filled.
func DescribePath(path string) Device {
	d := Device{Path: path, Class: ClassUnknown}
	st, err := os.Stat(path)
	if err != nil {
		return d
	}
	switch mode := st.Mode(); {
	case mode.IsDir():
		d.Kind = kindScratch
	case mode.IsRegular():
		d.Kind = kindFile
	case mode&os.ModeDevice != 0 && mode&os.ModeCharDevice == 0:
		d.Kind = kindDevice
	}
	return d
}
