// Package enrollment holds the words of an enrollment's life in a
// sequence: its statuses (enrollments.status) and those of its sends
// (sends.status). It imports nothing of the project, so the store and the
// domain packages share one type.
package enrollment

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
