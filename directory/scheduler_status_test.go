package directory_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func TestLocalState(t *testing.T) {
	t.Parallel()
	now := time.Unix(1791066600, 0)
	on := directory.Entry{Origin: schedOrigin, Enabled: true}
	off := directory.Entry{Origin: schedOrigin}
	hb := directory.StateRecord{State: directory.StateRegistered, Registered: true, Operation: directory.OpHeartbeat, Outcome: directory.OutcomeRecorded, NextHeartbeat: now.Add(time.Hour)}
	reg := directory.StateRecord{State: directory.StateRegistered, Registered: true, Operation: directory.OpRegister, Outcome: directory.OutcomeCreated, NextHeartbeat: now.Add(time.Hour)}
	overdue := hb
	overdue.NextHeartbeat = now.Add(-time.Hour)
	for _, tc := range []struct {
		name  string
		entry directory.Entry
		rec   directory.StateRecord
		want  directory.State
	}{
		{"NeverRun", on, directory.StateRecord{}, directory.StateConfigured},
		{"Registered", on, reg, directory.StateRegistered},
		{"HeartbeatCurrent", on, hb, directory.StateHeartbeatCurrent},
		{"HeartbeatOverdue", on, overdue, directory.StateRegistered},
		{"Retrying", on, directory.StateRecord{State: directory.StateRetrying, Attempts: 2}, directory.StateRetrying},
		{"DisabledInConfig", off, hb, directory.StateDisabled},
		{"Unregistered", on, directory.StateRecord{State: directory.StateDisabled}, directory.StateDisabled},
		{"UnregisterPending", off, directory.StateRecord{State: directory.StateUnregisterPending}, directory.StateUnregisterPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := directory.LocalState(tc.entry, tc.rec, now); got != tc.want {
				t.Fatalf("LocalState = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLocalStatusWithoutStore(t *testing.T) {
	t.Parallel()
	st, err := directory.LocalStatus(context.Background(), []directory.Entry{{Origin: schedOrigin, Enabled: true}, {Origin: "https://b.example"}}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[0].State != directory.StateConfigured || st[1].State != directory.StateDisabled {
		t.Fatalf("status %+v", st)
	}
}
