package directory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fedkit/fedkit/directory/internal/yamledit"
)

var (
	// ErrAcknowledgementRequired is returned by Unregister for an
	// environment-only configuration without AcknowledgeExternalDisable:
	// nothing durable can be edited, so the operator must confirm they
	// disable the entry at its source.
	ErrAcknowledgementRequired = errors.New("directory: environment-only configuration; unregister needs --acknowledge-external-disable")
	// ErrUnregisterPending is returned when the entry was durably disabled
	// but the remote unregister failed. Re-run the command to finish; a
	// restart will not re-register meanwhile.
	ErrUnregisterPending = errors.New("directory: unregister-pending")
	// ErrRemoveNeedsFile is returned when --remove is asked of an
	// environment-only configuration, which has no file to remove from.
	ErrRemoveNeedsFile = errors.New("directory: --remove needs a file-backed configuration")
)

// The YAML edit errors, re-exported for callers of Unregister.
var (
	ErrConfigSymlink    = yamledit.ErrSymlink
	ErrConfigNotRegular = yamledit.ErrNotRegular
	ErrConfigLayout     = yamledit.ErrUnsupported
)

// EditStep and the edit hook let tests inject a crash into the YAML edit.
type EditStep = yamledit.Step

// The YAML edit steps.
const (
	EditBeforeTempWrite = yamledit.StepBeforeTempWrite
	EditAfterTempWrite  = yamledit.StepAfterTempWrite
	EditAfterBackup     = yamledit.StepAfterBackup
	EditAfterRename     = yamledit.StepAfterRename
)

// UnregisterOpts configures Unregister.
type UnregisterOpts struct {
	// ConfigFile is the regular YAML configuration holding the entry. Empty
	// means environment-only configuration.
	ConfigFile string
	// AcknowledgeExternalDisable is required with environment-only
	// configuration (--acknowledge-external-disable). With a ConfigFile it
	// changes nothing: the durable edit is made all the same, because a
	// file left saying enabled: true would register the relay again at the
	// next restart.
	AcknowledgeExternalDisable bool
	// Remove deletes the entry from ConfigFile after remote success
	// (--remove), keeping the pre-disable backup.
	Remove bool
	// Store is the Directory state store. Set it whenever a Redis URL is
	// configured, even with the scheduler gate off: the lease then fences
	// out a running scheduler and the state records the suppression.
	Store StateStore
	// Lease tunes the lease. Its Wait defaults to ManualLeaseWaitDefault
	// here: a busy scheduler finishes first.
	Lease *LeaseOpts
	// Call is passed to the client (interactive defaults when nil).
	Call *CallOpts
	// Now is the clock. Defaults to time.Now. The Client and
	// MemoryStateStore handed to Unregister take it when they have no Now
	// of their own.
	Now func() time.Time
	// EditHook, for tests, runs at each step of the YAML edit; an error
	// stops the edit as a crash would.
	EditHook func(EditStep) error
}

// UnregisterReport describes what Unregister did.
type UnregisterReport struct {
	// Origin is the Directory left.
	Origin string
	// State is StateDisabled after remote success, StateUnregisterPending
	// after a remote failure.
	State State
	// Edited reports that the configuration file was changed to disable
	// the entry (false when it already was, or env-only).
	Edited bool
	// Removed reports that --remove deleted the entry.
	Removed bool
	// Backup is the pre-disable copy of the configuration, if any.
	Backup string
	// Result is the remote result on success.
	Result *Result
	// Warnings are operator notes built from closed values.
	Warnings []string
	// Guidance says how to finish after a remote failure, else "".
	Guidance string
}

// Unregister leaves a Directory durably. In order: take the Directory's
// lease (when Store is set) and load its state, stopping before any remote
// traffic if either fails; disable the entry in the YAML file crash-safely;
// write the lease-fenced suppression (unregister-pending); only then send the
// signed unregister. A remote failure leaves the entry disabled and returns
// ErrUnregisterPending with guidance; success records StateDisabled and,
// with Remove, deletes the entry.
func Unregister(ctx context.Context, lc Lifecycle, origin string, opts *UnregisterOpts) (*UnregisterReport, error) {
	var o UnregisterOpts
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	} else {
		adoptClock(lc, o.Now)
		adoptClock(o.Store, o.Now)
	}
	if _, err := ParseOrigin(origin); err != nil {
		return nil, err
	}
	rep := &UnregisterReport{Origin: origin}
	envOnly := o.ConfigFile == ""
	if envOnly {
		if !o.AcknowledgeExternalDisable {
			return nil, ErrAcknowledgementRequired
		}
		if o.Remove {
			return nil, ErrRemoveNeedsFile
		}
		rep.Warnings = append(rep.Warnings, "configuration is environment-only: disable "+origin+
			" in the external configuration source before restarting, or it will be registered again")
	}

	// 1. Lease and state: any failure stops before remote traffic.
	var lease *Lease
	var rec StateRecord
	callCtx := ctx
	if o.Store != nil {
		var err error
		lease, err = AcquireLease(ctx, o.Store, origin, interactiveLease(o.Lease))
		if err != nil {
			return nil, fmt.Errorf("directory: unregister: cannot own the Directory's state: %w", err)
		}
		defer lease.Release()
		if rec, err = lease.Load(lease.Context()); err != nil {
			return nil, fmt.Errorf("directory: unregister: cannot load the Directory's state: %w", err)
		}
		callCtx = lease.Context()
	}

	// 2. Durable disable in the file.
	if !envOnly {
		edited, err := yamledit.Disable(o.ConfigFile, origin, &yamledit.Opts{Hook: o.EditHook})
		if err != nil {
			return nil, fmt.Errorf("directory: unregister: cannot disable the entry durably: %w", err)
		}
		rep.Edited = edited
		// An entry found already disabled made no backup now; name one
		// only if an earlier edit left it.
		if bak := yamledit.BackupPath(o.ConfigFile); edited || fileExists(bak) {
			rep.Backup = bak
		}
	}

	// 3. Lease-fenced suppression write.
	if lease != nil {
		rec.State = StateUnregisterPending
		rec.Operation, rec.Outcome, rec.Code, rec.Diagnostic = OpUnregister, "", "", DiagNone
		if err := lease.Save(ctx, rec); err != nil {
			return nil, fmt.Errorf("directory: unregister: suppression not recorded; nothing sent: %w", err)
		}
	}

	// 4. Only now the remote request.
	res, err := lc.Unregister(callCtx, origin, o.Call)
	done := o.Now()
	if err != nil {
		rep.State = StateUnregisterPending
		rep.Guidance = "the entry stays disabled and will not be registered again; keep the relay's actor endpoint online and re-run `relay directory unregister " + origin + "` to finish"
		if lease != nil && !lease.Lost() {
			rec.Attempts = min(rec.Attempts+1, MaxAttempts)
			rec.LastAttempt = done
			rec.Diagnostic, rec.Code = diagnose(err)
			_ = lease.saveAfter(ctx, rec) // best effort: unregister-pending is already recorded
		}
		return rep, fmt.Errorf("%w: %w", ErrUnregisterPending, err)
	}
	rep.State, rep.Result = StateDisabled, res
	if lease != nil {
		rec = StateRecord{
			State: StateDisabled, LastAttempt: done, LastSuccess: done,
			Operation: OpUnregister, Outcome: res.Outcome,
		}
		if err := lease.saveAfter(ctx, rec); err != nil {
			rep.Warnings = append(rep.Warnings, "the Directory removed the relay but the local state was not updated; status may show unregister-pending")
		}
	}
	if o.Remove {
		removed, err := yamledit.Remove(o.ConfigFile, origin, nil)
		if err != nil {
			return rep, fmt.Errorf("directory: unregistered, but --remove failed (the entry stays disabled): %w", err)
		}
		rep.Removed = removed
	}
	return rep, nil
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
