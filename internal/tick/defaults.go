package tick

import "reflect"

// Defaults fills every unset field of *cfg from the same field of def:
// every tick's and the guard's settings share the rule that a zero (or
// nonsensical negative) number or duration, an empty string and a nil
// func, pointer or interface take the default. A field def leaves zero is
// not touched, so a setting without a default keeps what it holds.
// T must be a struct.
func Defaults[T any](cfg *T, def T) {
	v, d := reflect.ValueOf(cfg).Elem(), reflect.ValueOf(def)
	for i := range v.NumField() {
		f, df := v.Field(i), d.Field(i)
		if f.CanSet() && !df.IsZero() && unset(f) {
			f.Set(df)
		}
	}
}

func unset(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return f.Int() <= 0
	case reflect.Float32, reflect.Float64:
		return f.Float() <= 0
	}
	return f.IsZero()
}
