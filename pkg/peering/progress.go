package peering

import "time"

// Progress is told of each step of a peering as it starts (Step) and ends
// (Info, Timed: with the time since start, where the reader wants it).
// liqoctl prints it (its output.Printer is one); the controller manager
// logs it and reports it in the ForeignCluster's conditions. Calls come
// from one goroutine at a time.
type Progress interface {
	Step(format string, args ...any)
	Info(format string, args ...any)
	Timed(start time.Time, format string, args ...any)
}

// Discard is a Progress that drops everything.
var Discard Progress = discard{}

type discard struct{}

func (discard) Step(string, ...any)             {}
func (discard) Info(string, ...any)             {}
func (discard) Timed(time.Time, string, ...any) {}
