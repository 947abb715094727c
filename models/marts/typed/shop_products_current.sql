{{ typed_current_state() }}
