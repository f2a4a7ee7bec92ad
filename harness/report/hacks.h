/* hacks.h - short names of the reward-hack taxonomy (DESIGN §7) for people reading reports: a finding id
 * such as H10 alone says little in a table. */
#ifndef SB_HACKS_H
#define SB_HACKS_H

/* "inputs modified" for "H10"; NULL for an id outside H01..H22. */
const char *hack_title(const char *id);
/* 'S', 'R' or 'D' classes it can be found by, as DESIGN §7 lists them ("S+R"); "" when unknown. */
const char *hack_found_by(const char *id);

#endif
