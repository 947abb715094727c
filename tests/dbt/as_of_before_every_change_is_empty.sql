-- Before the first change of any key, cdc_as_of holds no row.
select * from {{ cdc_as_of('0001-01-01 00:00:00') }}
