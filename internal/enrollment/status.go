// Package enrollment holds the words of an enrollment's life in a
// sequence: its statuses (enrollments.status), the moves between them, and
// the statuses of its sends (sends.status). It imports nothing of the
// project, so the store and the domain packages share one type.
package enrollment

import "slices"

// Status is an enrollment's state, as stored in enrollments.status.
type Status string

const (
	Active       Status = "active"
	Completed    Status = "completed"
	Bounced      Status = "bounced"
	Replied      Status = "replied"
	Unsubscribed Status = "unsubscribed"
	// Failed: a step cannot be rendered or was refused for good.
	Failed Status = "failed"
	// DeliveryUnknown: a step's final dot went out and no answer came; it
	// may have been delivered, so only an operator moves it (requeue).
	DeliveryUnknown Status = "delivery_unknown"
)

// Statuses lists every status; the database's CHECK constraint allows
// exactly these (schema test).
var Statuses = []Status{Active, Completed, Bounced, Replied, Unsubscribed, Failed, DeliveryUnknown}

// Requeueable are the statuses only an operator moves back to active.
var Requeueable = []Status{Failed, DeliveryUnknown}

// transitions is every move an enrollment's status may make; its step and
// due time move within active. Only active rows move on their own: the
// email tick's claim leases them (active to active) and its settle turns
// a row it holds into its outcome (the next step or a backoff stays
// active; the last step sent completes it; a hard bounce, a refusal for
// good, a suppressed address or no answer after the dot end it); the inbox
// tick and `enrollment mark` end them replied, bounced or unsubscribed, an
// unsubscribe ends them unsubscribed. An ended row never moves, except
// that requeue (an operator) revives the Requeueable ones. Every SQL
// writer is checked against it on a real database
// (store's TestEnrollmentWritersFollowTheTable); docs/architecture.md
// lists the writers.
var transitions = map[Status][]Status{
	Active:          {Active, Completed, Bounced, Replied, Unsubscribed, Failed, DeliveryUnknown},
	Failed:          {Active},
	DeliveryUnknown: {Active},
}

// CanBecome reports whether an enrollment in status s may move to next.
func (s Status) CanBecome(next Status) bool { return slices.Contains(transitions[s], next) }

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// SendStatus is a send's state, as stored in sends.status. A failed send
// was refused by the server: nothing was delivered, and a retry takes the
// row over. A delivery_unknown send may have been delivered: no tick takes
// it over.
type SendStatus string

const (
	SendSending         SendStatus = "sending"
	SendSent            SendStatus = "sent"
	SendFailed          SendStatus = "failed"
	SendDeliveryUnknown SendStatus = "delivery_unknown"
)

// SendStatuses lists every send status (schema test).
var SendStatuses = []SendStatus{SendSending, SendSent, SendFailed, SendDeliveryUnknown}
