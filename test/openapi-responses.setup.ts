import { takeOpenApiMismatches } from './helpers/openapi-responses';

/*
 * Fails the e2e test during which an answer did not match the OpenAPI document (see
 * helpers/openapi-responses.ts); answers made by a suite's hooks fail its next test, or the
 * suite at its end.
 */
const failOnMismatches = (): void => {
  const found = takeOpenApiMismatches();
  if (found.length > 0) {
    throw new Error(`Answers that do not match the OpenAPI document:\n- ${found.join('\n- ')}`);
  }
};
afterEach(failOnMismatches);
afterAll(failOnMismatches);
