{{ typed_history() }}
