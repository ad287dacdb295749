import { ApiProperty, PickType } from '@nestjs/swagger';

const STATUSES = ['queued', 'running', 'done', 'timed-out', 'failed'];
const LIMITS = ['cpu', 'wall', 'address-space', 'file-size', 'processes', 'output'];

/** The answer to a test-run asked for: its id, to read its report with. */
export class TestRunStarted {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ enum: ['queued'] })
  status!: 'queued';
}

/**
 * One run in a list (a version's runs; the diff's newest run of each reviewer): who asked for it
 * and what its report sums up to, without the report (`GET .../test-runs/<id>` reads it).
 */
export class TestRunSummary {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ enum: STATUSES })
  status!: string;

  @ApiProperty({
    type: 'integer',
    description: 'Events of its report flagged for the reviewer, of both lists (0 until it ends)',
  })
  flagged_events!: number;

  @ApiProperty({ type: 'integer' })
  requested_by_user_id!: number;

  @ApiProperty({ description: "The requester's username (`name` in `community-plugins/me/`)" })
  requested_by_username!: string;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  finished_at!: string | null;

  // null among the values: a nullable enum's null must be one of them (OpenAPI 3.0).
  @ApiProperty({
    enum: [...LIMITS, null],
    nullable: true,
    type: String,
    description: 'The limit that ended the run, if one did',
  })
  limit!: string | null;
}

/** A page of a version's runs, in the shape of the other lists (`total`, `limit`, `offset`). */
export class TestRunPage {
  @ApiProperty({ type: 'integer', description: "The version's runs, over all pages" })
  total!: number;

  @ApiProperty({ type: 'integer', description: 'The limit that applied' })
  limit!: number;

  @ApiProperty({ type: 'integer' })
  offset!: number;

  @ApiProperty({ type: [TestRunSummary], description: 'Newest first' })
  runs!: TestRunSummary[];
}

/** One event of a report: the plugin's testimony (`events`) or a fact observed from outside (`observed_events`). */
export class TestRunEventView {
  @ApiProperty({
    description:
      "In `events`: CPython's own audit event name (`open`, `socket.connect`, `subprocess.Popen`, `os.system`, " +
      '`exec`, `compile`, `import`, ...), or `runner.*` for what the runner noticed itself (`runner.forged-line`, ' +
      '`runner.builtins-changed`, `runner.sys-changed`). In `observed_events`: `kernel.<system call>` as traced ' +
      'from outside the jail (`kernel.openat`, `kernel.connect`, `kernel.execve`, ...), or `server.*` for what the ' +
      'server concluded (`server.testimony-missing`, `server.tracer-lost`)',
    example: 'socket.connect',
  })
  event!: string;

  @ApiProperty({ type: [String], description: 'The arguments made printable and bounded' })
  args!: string[];

  @ApiProperty({
    description:
      'True for what a reviewer must look at: writes outside the working directory, connects and lookups, ' +
      'spawns, dynamic code, reads outside the working directory, and the attribute reads CPython audits',
  })
  flagged!: boolean;
}

/** A test-run with its report (a version's newest, or one by its id); the report's fields are null (events empty) until it ends. */
export class TestRunView extends PickType(TestRunSummary, [
  'id',
  'status',
  'requested_by_user_id',
  'created_at',
  'finished_at',
  'limit',
] as const) {
  @ApiProperty({ type: 'integer' })
  plugin_id!: number;

  @ApiProperty()
  version!: string;

  @ApiProperty({ description: 'The bytes run' })
  sha256!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  duration_ms!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "The kernel's account of the jail: the peak resident set of its process (null when the server ended the run)",
  })
  peak_memory_bytes!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Bounded' })
  stdout!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Bounded' })
  stderr!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The traceback of what the plugin raised, bounded',
  })
  exception!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "repr() of run()'s return value, bounded" })
  return_value!: string | null;

  @ApiProperty({
    type: [TestRunEventView],
    description:
      "The plugin's own testimony: the audit events its interpreter raised, in order, bounded in number. " +
      'Context (which Python call did it), not proof: the plugin shares that interpreter and can silence or ' +
      'forge it. `observed_events` is what the report asserts',
  })
  events!: TestRunEventView[];

  @ApiProperty({ type: 'integer', description: 'Testimony events past the bound, not recorded' })
  events_dropped!: number;

  @ApiProperty({
    type: [TestRunEventView],
    description:
      "What the kernel saw the jail's processes do, traced from outside their reach (files opened for writing " +
      'or outside the working directory, connects, binds, sends, process creation and execution, descriptor ' +
      "tricks, ptrace, mounts, what the jail denied), in order, bounded in number; and the server's own " +
      'conclusions, such as `server.testimony-missing` where the testimony lacks an action seen here',
  })
  observed_events!: TestRunEventView[];

  @ApiProperty({ type: 'integer', description: 'Observed events past the bound, not kept' })
  observed_events_dropped!: number;
}
