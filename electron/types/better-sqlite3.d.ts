/**
 * The part of better-sqlite3's API Waystation uses: the package ships no
 * types, and its API is small and stable.
 */
declare module 'better-sqlite3' {
  namespace Database {
    interface RunResult {
      changes: number;
      lastInsertRowid: number | bigint;
    }
    interface Statement {
      run(...params: unknown[]): RunResult;
      get(...params: unknown[]): unknown;
      all(...params: unknown[]): unknown[];
    }
    interface Options {
      readonly?: boolean;
      fileMustExist?: boolean;
      timeout?: number;
    }
    interface Database {
      prepare(source: string): Statement;
      exec(source: string): Database;
      pragma(source: string, options?: { simple?: boolean }): unknown;
      transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
      close(): Database;
      readonly open: boolean;
      readonly inTransaction: boolean;
    }
  }
  interface DatabaseConstructor {
    new (filename: string | Buffer, options?: Database.Options): Database.Database;
  }
  const Database: DatabaseConstructor;
  export default Database;
}
