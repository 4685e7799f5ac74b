// The spec-driven fuzz test (support/fuzz-suite.ts), shard 2 of 2: jest runs the shards side by side.
import { fuzzSuite } from './support/fuzz-suite';

fuzzSuite(2);
